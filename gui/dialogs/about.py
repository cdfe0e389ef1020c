"""Help › About masklens (version, log file, Qt/PySide6/torch/Python versions) and the window
icon: :class:`About` is the action the window puts in its Help menu, with the dialog it opens."""

from __future__ import annotations

import platform
import sys
from importlib import metadata

from PySide6.QtCore import QObject, Qt, qVersion
from PySide6.QtGui import QAction, QGuiApplication, QIcon
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from masklens.core import __version__
from masklens.core.runtime import logs


def app_icon() -> QIcon:
    """masklens' icon (resources/desktop: the SVG, with the PNG as a fallback size)."""
    from masklens.resources import ICON_PNG, ICON_SVG

    icon = QIcon(str(ICON_SVG))
    icon.addFile(str(ICON_PNG))
    return icon


def _installed(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def about_fields() -> dict[str, str]:
    """What the About box lists, in order (torch is looked up, not imported)."""
    import PySide6

    return {
        "Version": __version__,
        "Log file": str(logs.log_path()),
        "Qt": qVersion(),
        "PySide6": PySide6.__version__,
        "torch": _installed("torch"),
        "Python": f"{platform.python_version()} ({sys.platform})",
    }


class AboutDialog(QDialog):
    """The About box: one selectable line per field of :func:`about_fields`."""

    def __init__(self, parent=None) -> None:  # noqa: ANN001 - any QWidget
        super().__init__(parent)
        self.setWindowTitle("About masklens")
        self.setWindowIcon(app_icon())
        lay = QVBoxLayout(self)
        head = QLabel("<b>masklens</b> — inspect, prompt and score promptable and "
                      "open-vocabulary segmentation models")
        head.setWordWrap(True)
        lay.addWidget(head)
        form = QFormLayout()
        self.values: dict[str, QLabel] = {}
        for name, value in about_fields().items():
            label = QLabel(value)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setObjectName(f"about-{name.lower().replace(' ', '-')}")
            self.values[name] = label
            form.addRow(f"{name}:", label)
        lay.addLayout(form)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        copy = buttons.addButton("Copy", QDialogButtonBox.ButtonRole.ActionRole)
        copy.clicked.connect(self.copy_to_clipboard)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def text(self) -> str:
        return "\n".join(f"{name}: {label.text()}" for name, label in self.values.items())

    def copy_to_clipboard(self) -> None:
        """For bug reports: every field as text."""
        QGuiApplication.clipboard().setText(self.text())


class About(QObject):
    """Help › About masklens: ``action`` opens ``dialog`` (None until first opened) over ``window``."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.dialog: AboutDialog | None = None
        self.action = QAction("&About masklens", window)
        self.action.triggered.connect(self.show)
        self.action.setMenuRole(QAction.MenuRole.AboutRole)

    def show(self) -> None:
        if self.dialog is None:
            self.dialog = AboutDialog(self.window)
        self.dialog.open()
