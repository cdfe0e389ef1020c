"""Evaluate › Model environment…: the Python environment the window's torch models run in (their
process of their own, :mod:`masklens.core.models.remote`). A masklens without torch — the
desktop bundle — runs its models in an environment that has ``masklens[models]``. The window
remembers the choice; without one, the ``model_python`` setting (``MASKLENS_MODEL_PYTHON``)
decides, else the window's own Python."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog

from masklens.core.runtime.config import is_program

if TYPE_CHECKING:
    from masklens.gui.window.main_window import MainWindow


def chosen_python(model_python: str) -> Path | None:
    """The window's remembered choice (its settings' ``model_python``), or None."""
    return Path(model_python) if model_python else None


def set_model_environment(window: MainWindow, python: Path | None) -> bool:
    """Run the models in ``python``'s environment from the next prompt on (None: the setting's,
    else the window's own); the process of the previous one ends. False (and said) when
    ``python`` is no executable file."""
    if python is not None and not is_program(python):
        window.message_bar.show_message(f"model environment: {python} is not an executable file", "error")
        return False
    window.model_host.stop()  # its models go with it; the next prompt loads them in the new one
    window.model_host.python = python
    window.settings.model_python = str(python or "")
    window.prompt_bar.refresh_models(elsewhere=window.model_host.external_python is not None)
    where = str(python) if python is not None else "the default Python (the model_python setting, else this one)"
    window.message_bar.show_message(f"models run in {where} from the next prompt on", "info")
    return True


def open_model_environment_dialog(window: MainWindow) -> bool:
    """Ask for the environment's Python (e.g. a venv's bin/python)."""
    start = str(window.model_host.python or "")
    picked, _ = QFileDialog.getOpenFileName(
        window, "Model environment: the Python that has masklens[models]", start,
        "Python (python python3 python3.* python.exe);;All files (*)")
    return bool(picked) and set_model_environment(window, Path(picked))
