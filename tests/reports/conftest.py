"""The toy kind, layout and backend these tests install live in copies of the plug-in registries,
dropped after each test, so later tests see only the installed plug-ins."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def own_plugin_registries(monkeypatch):
    from masklens.core.models import registry
    from masklens.core.reports import layout
    from masklens.core.scoring import contract

    monkeypatch.setattr(contract, "KINDS", contract.KINDS.copy())
    monkeypatch.setattr(layout, "LAYOUTS", layout.LAYOUTS.copy())
    monkeypatch.setattr(registry, "BACKENDS", registry.BACKENDS.copy())
