"""One window session in a process of its own (a scale factor is the process' own), for
tests/gui/test_scale_factor_two.py: ``python scaled_session.py scaled|normal SETTINGS OUT.json``.

``scaled`` (run with ``QT_SCALE_FACTOR=2`` on a 1920×1080 screen): start with the settings of an
earlier normal session, open the CAFE demo, Correct mode (C), View › Reset layout, quit (Ctrl+Q).
``normal``: start with what that left, widen the window to 1600×1000. What was seen goes to OUT."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication


def wait_until(app: QApplication, condition, seconds: float = 20.0) -> bool:
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        app.processEvents()
        QTest.qWait(10)
    return True


def rect(r) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def main(phase: str, settings_path: str, out: str) -> None:
    app = QApplication(sys.argv[:1])
    from masklens.gui.window.main_window import MainWindow

    w = MainWindow(settings_path=Path(settings_path))
    w.show()
    wait_until(app, lambda: w._docks_sized)
    QTest.qWait(50)
    seen: dict[str, object] = {"screen": rect(w.screen().availableGeometry())}
    if phase == "scaled":
        seen["started"] = rect(w.geometry())
        w.commands.open_demo("cafe", sync=True)
        wait_until(app, lambda: bool(w.state.readouts) and not w.jobs.busy)
        canvas = w.sample_view.panels[0].canvas
        canvas.setFocus()
        QTest.keyClick(canvas, Qt.Key.Key_C)  # Correct mode: its toolbar and the edit status too
        app.processEvents()
        least = w.minimumSizeHint().expandedTo(w.minimumSize())
        seen["minimum"] = [least.width(), least.height()]
        status = w.statusBar()
        seen["status"] = rect(status.geometry().translated(w.mapToGlobal(QPoint(0, 0))))
        view = next(a for a in w.menuBar().actions() if a.text().replace("&", "") == "View").menu()
        next(a for a in view.actions() if a.text().replace("&", "") == "Reset layout").trigger()
        QTest.qWait(50)
        seen["reset"] = rect(w.geometry())
        QTest.keyClick(canvas, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)  # quit: settings saved
        wait_until(app, lambda: not w.isVisible())
    else:
        seen["started"] = rect(w.geometry())
        seen["samples_at_start"] = w.browser_dock.width()
        w.resize(1600, 1000)
        wait_until(app, lambda: w.browser_dock.width() >= 500, seconds=5)
        seen["samples_widened"] = w.browser_dock.width()
        w.close()
    Path(out).write_text(json.dumps(seen))


if __name__ == "__main__":
    main(*sys.argv[1:4])
