"""Make the Gallery and Help screenshots of README.md and docs/gui.md (offscreen, real input).

    PYTHONPATH=.pkgroot .venv/bin/python tools/docs_screenshots.py [OUT_DIR]   # default docs/images

The window opens the CAFE demo at 1600 × 1000 with default settings and a throw-away config,
cache and review store (nothing of yours is read or written). Then, with real key and mouse
events as a user gives them:

* ``gui_gallery.png``: the Gallery tab; tile 3 clicked, Shift+click on 6, Ctrl+click on 9, and
  ``W`` (Ground truth wrong, for the four selected samples); taken once every tile shown has
  its thumbnail;
* ``gui_shortcuts.png``: F1, the shortcut sheet (the dialog alone);
* ``gui_filter_language.png``: Help › Filter language…, the reference of the CAFE columns.

`masklens gui --screenshot` makes the other window pictures; this script exists because those
three need input after the window is up.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_scratch = Path(tempfile.mkdtemp(prefix="masklens-shots-"))
for var, sub in (("MASKLENS_CONFIG_DIR", "config"), ("MASKLENS_CACHE_DIR", "cache"), ("XDG_DATA_HOME", "data")):
    os.environ[var] = str(_scratch / sub)


def _wait(app, until, timeout_s: float = 20.0) -> None:
    end = time.monotonic() + timeout_s
    while not until():
        if time.monotonic() > end:
            raise TimeoutError("the window did not settle")
        app.processEvents()
        time.sleep(0.01)
    for _ in range(5):
        app.processEvents()


def main(out: Path) -> int:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    w = MainWindow(Settings(), persist=False)
    w.resize(1600, 1000)
    w.show()
    w.commands.open_demo("cafe", sync=True)
    _wait(app, lambda: bool(w.state.readouts) and not w.jobs.busy)
    w.message_bar.hide()
    out.mkdir(parents=True, exist_ok=True)

    bar = w.tabs.tabBar()
    tab = next(i for i in range(w.tabs.count()) if w.tabs.tabText(i) == "Gallery")
    QTest.mouseClick(bar, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, bar.tabRect(tab).center())
    grid = w.gallery.grid
    _wait(app, lambda: bool(grid.painted))

    def click(i: int, mods=Qt.KeyboardModifier.NoModifier) -> None:
        QTest.mouseClick(grid.viewport(), Qt.MouseButton.LeftButton, mods, grid.tile_rect(i).center())
        app.processEvents()

    click(2)
    click(5, Qt.KeyboardModifier.ShiftModifier)
    click(8, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClick(grid.viewport(), Qt.Key.Key_W)  # Ground truth wrong, for the four
    variant = w.gallery.tiles.variant()
    samples = w.browser.model.samples
    _wait(app, lambda: w.gallery.loader.pending() == 0 and all(
        w.gallery.cache.get(samples[r].id, variant) is not None for r in grid.painted))
    w.message_bar.hide()  # "recorded for 4 samples" is in the Review dock too; the bar floats over tabs
    app.processEvents()
    _save(w.grab(), out / "gui_gallery.png")

    QTest.keyClick(grid.viewport(), Qt.Key.Key_F1)
    _wait(app, lambda: w.help.sheet is not None and w.help.sheet.isVisible())
    _fit(w.help.sheet)
    _wait(app, lambda: True)
    _save(w.help.sheet.grab(), out / "gui_shortcuts.png")
    w.help.sheet.close()

    act = next(a for a in w.help.actions if a.text().replace("&", "").startswith("Filter language"))
    act.trigger()
    _wait(app, lambda: w.help.filter_reference is not None and w.help.filter_reference.isVisible())
    _fit(w.help.filter_reference)
    _wait(app, lambda: True)
    _save(w.help.filter_reference.grab(), out / "gui_filter_language.png")
    w.help.filter_reference.close()

    from masklens.gui.app import _finish_jobs

    _finish_jobs(app, w)
    w.close()
    return 0


def _fit(dialog) -> None:
    """The dialog as large as its table: every row and every text whole, nothing scrolled."""
    from PySide6.QtCore import QModelIndex

    table = dialog.table
    table.resizeColumnsToContents()
    table.setCurrentIndex(QModelIndex())  # no focus frame on the first cell
    frame = 2 * table.frameWidth() + 2
    table.setMinimumSize(table.horizontalHeader().length() + frame,
                         table.horizontalHeader().height() + table.verticalHeader().length() + frame)
    dialog.layout().activate()
    size = dialog.layout().totalMinimumSize()  # plus the height a wrapped note takes beyond its minimum
    dialog.resize(size.width(), size.height() + 2 * dialog.fontMetrics().height())


def _save(pixmap, path: Path) -> None:
    if not pixmap.save(str(path)):
        raise SystemExit(f"cannot write {path}")
    print(f"wrote {path} ({pixmap.width()} × {pixmap.height()})", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/images")))
