"""Shared helpers for the demo tests: the generator modules (tools/demo/) are scripts, not a package."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

GENERATORS = Path(__file__).resolve().parents[2] / "tools" / "demo"


@pytest.fixture(scope="session")
def scenes():
    """The procedural scene module (tools/demo/demo_scenes.py)."""
    if str(GENERATORS) not in sys.path:
        sys.path.insert(0, str(GENERATORS))
    import demo_scenes

    return demo_scenes


@pytest.fixture(scope="session")
def make_demo():
    """The generator entry point module (tools/demo/make_demo.py)."""
    if str(GENERATORS) not in sys.path:
        sys.path.insert(0, str(GENERATORS))
    import make_demo

    return make_demo
