"""The [gui] extra pins PySide6 below 6.12 (6.12.0 drops a reference to None on every void call
under Python 3.11, and CPython aborts after a few thousand calls): the installed one obeys it."""

from __future__ import annotations

from importlib.metadata import requires, version

from packaging.requirements import Requirement


def test_the_installed_pyside6_satisfies_the_gui_extra_s_pin():
    pins = [Requirement(r) for r in requires("masklens") or [] if r.startswith("PySide6-Essentials")]
    assert pins and all("6.12" in str(p.specifier) for p in pins)
    installed = version("PySide6-Essentials")
    assert all(p.specifier.contains(installed) for p in pins), installed
