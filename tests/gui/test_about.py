"""Help › About (version, the log file's path, Qt/PySide6/torch versions), the window icon, and
the log path in every "internal error" message of the window."""

from __future__ import annotations

import logging
import sys
from importlib import metadata

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QMenu

from masklens.core import __version__
from masklens.core.runtime import logs


@pytest.fixture(autouse=True)
def _log_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(logs.LOG_DIR_ENV, str(tmp_path / "logs"))


def _menu_bar_action(window, text):
    return next(a for a in window.menuBar().actions() if a.text().replace("&", "") == text)


def test_help_about_shows_the_log_path_and_versions(window, qtbot, tmp_path):
    bar = window.menuBar()
    help_action = _menu_bar_action(window, "Help")
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.actionGeometry(help_action).center())
    menu = help_action.menu()
    qtbot.waitUntil(menu.isVisible, timeout=3000)
    about = next(a for a in menu.actions() if a.text().replace("&", "") == "About masklens")
    assert about is window.about.action
    qtbot.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(about).center())
    qtbot.waitUntil(lambda: window.about.dialog is not None and window.about.dialog.isVisible(),
                    timeout=3000)
    dialog = window.about.dialog
    assert dialog.values["Log file"].text() == str(tmp_path / "logs" / "masklens.log")
    assert dialog.values["Version"].text() == __version__
    import PySide6

    assert dialog.values["PySide6"].text() == PySide6.__version__
    assert dialog.values["Qt"].text() and dialog.values["Python"].text().startswith(
        f"{sys.version_info.major}.{sys.version_info.minor}")
    try:
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch_version = "not installed"
    assert dialog.values["torch"].text() == torch_version
    dialog.copy_to_clipboard()
    assert f"Log file: {tmp_path / 'logs' / 'masklens.log'}" in QApplication.clipboard().text()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=3000)


def test_the_window_has_the_masklens_icon(window):
    icon = window.windowIcon()
    assert not icon.isNull()
    pixels = icon.pixmap(64, 64).toImage()
    assert pixels.width() == 64
    centre = pixels.pixelColor(QPoint(32, 40))
    assert centre.alpha() > 0  # drawn, not a blank pixmap


def test_a_failed_job_names_the_log_file(window, qtbot):
    def broken(ctx):
        raise RuntimeError("boom")

    window.jobs.run("Broken job", broken)
    qtbot.waitUntil(lambda: "boom" in window.message_bar.text, timeout=5000)
    text = window.message_bar.text
    assert text.startswith("Broken job: internal error: RuntimeError: boom")
    assert str(logs.log_path()) in text


def test_an_exception_in_a_slot_names_the_log_file_and_is_logged(window, qtbot):
    from masklens.gui.app import install_excepthook

    logs.configure()
    old = sys.excepthook
    install_excepthook(window)
    try:
        try:
            raise ValueError("slot bug")
        except ValueError:
            sys.excepthook(*sys.exc_info())
    finally:
        sys.excepthook = old
    assert str(logs.log_path()) in window.message_bar.text
    for h in logging.getLogger("masklens").handlers:
        h.flush()
    assert "ValueError: slot bug" in logs.log_path().read_text()


def test_menus_stay_reachable(window):
    assert isinstance(_menu_bar_action(window, "Help").menu(), QMenu)


def test_a_menu_dialog_that_fails_names_the_log_file(qtbot, monkeypatch):
    import masklens.gui.dialogs.report_dialog as report_dialog
    from masklens.core.errors import MasklensError
    from masklens.gui.window.main_window import MainWindow

    def broken(window, state):
        raise KeyError("dialog bug")

    monkeypatch.setattr(report_dialog, "open_report_dialog", broken)
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    action = next(a for a in w.findChildren(type(w.about.action)) if a.text() == "Export report…")
    action.trigger()
    assert w.message_bar.text.startswith("internal error: KeyError")
    assert str(logs.log_path()) in w.message_bar.text

    def user_error(window, state):
        raise MasklensError("no benchmark open")

    monkeypatch.setattr(report_dialog, "open_report_dialog", user_error)
    action.trigger()
    assert w.message_bar.text == "no benchmark open"  # a user's mistake is not an internal error
