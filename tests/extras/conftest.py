"""The session's fresh venvs per extra (tests/extras/venvs.py), shared by this folder's tests."""

from venvs import core_venv, gui_venv, hub_venv, wheel  # noqa: F401 - fixtures
