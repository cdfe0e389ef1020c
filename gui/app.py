"""Application entry point (placeholder window until the inspection GUI lands)."""

from __future__ import annotations

import argparse
import os
import sys


def run_app(args: argparse.Namespace) -> int:
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = QMainWindow()
    window.setWindowTitle("masklens")
    window.setCentralWidget(QLabel("masklens — demo benchmark"))
    window.resize(1400, 900)
    window.show()
    if args.screenshot:
        app.processEvents()
        window.grab().save(args.screenshot)
        return 0
    return app.exec()
