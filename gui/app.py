"""Application entry point: `masklens gui [--demo] [--kind K] [--screenshot FILE.png]`."""

from __future__ import annotations

import argparse
import os
import sys


def run_app(args: argparse.Namespace) -> int:
    if getattr(args, "screenshot", None):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from masklens.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("masklens")
    if shot := getattr(args, "screenshot", None):  # reproducible: default settings, nothing saved
        from masklens.gui.settings import Settings

        window = MainWindow(Settings(), persist=False)
    else:
        window = MainWindow()
    kind = getattr(args, "kind", None)
    if getattr(args, "demo", False) or not (kind or shot):
        window.open_demo(kind, sync=bool(shot))
    elif kind:
        window.open_benchmark_dialog(kind)
    if shot:
        return screenshot(app, window, shot)
    window.show()
    return app.exec()


def screenshot(app, window, path: str, size: tuple[int, int] = (1600, 1000)) -> int:
    """Render the window offscreen at ``size`` (≥ 1400×900) to ``path`` and return 0."""
    from masklens.core.errors import MasklensError

    window.resize(*size)
    window.show()
    for _ in range(5):
        app.processEvents()
    window.sample_view.fit()
    app.processEvents()
    if not window.grab().save(path):
        raise MasklensError("cannot write the screenshot", path=path)
    print(f"wrote {path}", file=sys.stderr)
    window.close()
    return 0
