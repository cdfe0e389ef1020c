"""Shared helpers for the demo tests: the packaging/ generator modules are scripts, not a package."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"


@pytest.fixture(scope="session")
def scenes():
    """The procedural scene module (packaging/demo_scenes.py)."""
    if str(PACKAGING) not in sys.path:
        sys.path.insert(0, str(PACKAGING))
    import demo_scenes

    return demo_scenes


@pytest.fixture(scope="session")
def make_demo():
    """The generator entry point module (packaging/make_demo.py)."""
    if str(PACKAGING) not in sys.path:
        sys.path.insert(0, str(PACKAGING))
    import make_demo

    return make_demo
