"""Correct-mode stroke benchmark (plain script; offscreen Qt): one brush step at 2048².

A step is what one mouse move of a brush stroke costs: the EditSession writes the segment at
the mask's full resolution, the edit overlay re-composes the labels of the changed box only
(``MaskItem.refresh``) and the canvas viewport repaints synchronously. Printed against the
50 ms target and, as a ratio, against a baseline measured in this process: re-composing the
whole 2048² overlay per step (label map + indexed QPixmap + layer swap, what a redraw of the
ground-truth layer costs) and repainting. Also: one undo, and the bytes the undo stack holds.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MASKLENS_CONFIG_DIR", tempfile.mkdtemp(prefix="masklens-bench-"))

import numpy as np  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from masklens.gui.canvas import overlays  # noqa: E402
from masklens.gui.canvas.image_canvas import Canvas  # noqa: E402
from masklens.gui.correct.overlay import MaskItem  # noqa: E402
from masklens.gui.correct.session import EditSession  # noqa: E402

SIZE, TARGET_MS = 2048, 50.0


def path(n: int, r: float, y: float) -> list[tuple[float, float]]:
    """A wavy stroke across the image at height ``y``, ``n`` mouse moves of about 12 px each
    (every move changes pixels: the brush runs over background, the eraser through the disc)."""
    return [(300 + 12 * i, y + r * np.sin(i / 7)) for i in range(n)]


def main() -> None:
    app = QApplication.instance() or QApplication(sys.argv)
    yy, xx = np.ogrid[:SIZE, :SIZE]
    disc = (yy - 1024) ** 2 + (xx - 1024) ** 2 < 600**2
    canvas = Canvas()
    canvas.resize(1100, 1000)
    canvas.show()
    img = QImage(SIZE, SIZE, QImage.Format.Format_RGB888)
    img.fill(0x404040)
    canvas.set_image(img)
    app.processEvents()
    print(f"Correct mode, one brush step at {SIZE}² (canvas {canvas.width()}×{canvas.height()}, fit zoom), "
          f"target < {TARGET_MS:g} ms")
    for radius, erase, zoom in ((8, False, "fit"), (8, False, "1:1"), (32, False, "fit"), (32, True, "fit"),
                                (32, True, "1:1")):
        if True:
            canvas.fit() if zoom == "fit" else canvas.one_to_one()
            canvas.centerOn(1000, 1024 if erase else 200)
            session = EditSession(disc)
            item = MaskItem(session.mask, (SIZE, SIZE), "#F0E442", 0.5)
            canvas.scene().addItem(item)
            app.processEvents()
            pts = path(120, 100, 1024 if erase else 200)
            steps, parts = [], []
            session.begin_stroke(*pts[0], radius, erase=erase)
            for p in pts[1:]:
                t0 = time.perf_counter()
                box = session.stroke_to(*p)
                t1 = time.perf_counter()
                item.refresh(box)
                t2 = time.perf_counter()
                app.processEvents()  # the scene repaints the changed rectangle (as in the window)
                t3 = time.perf_counter()
                steps.append((t3 - t0) * 1000)
                parts.append(((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000))
            session.end_stroke()
            t0 = time.perf_counter()
            item.refresh(session.undo())
            app.processEvents()
            undo_ms = (time.perf_counter() - t0) * 1000
            held = sum(p.nbytes for p in session.redo_stack)
            # baseline: the whole overlay re-composed per step
            base = []
            session2 = EditSession(disc)
            session2.begin_stroke(*pts[0], radius, erase=erase)
            for p in pts[1:40]:
                t0 = time.perf_counter()
                session2.stroke_to(*p)
                labels = overlays.layer_labels(session2.mask, True)
                canvas.set_layer("full", overlays.to_pixmap(labels, overlays.layer_table("#F0E442", 0.5)), z=40)
                app.processEvents()
                base.append((time.perf_counter() - t0) * 1000)
            canvas.set_layer("full", None)
            canvas.scene().removeItem(item)
            med, p95 = statistics.median(steps), float(np.percentile(steps, 95))
            bmed = statistics.median(base)
            print(f"  {'eraser' if erase else 'brush '} radius {radius:>2} px, {zoom:>3}: step median {med:6.2f} ms, p95 {p95:6.2f} ms "
                  f"({'OK' if p95 < TARGET_MS else 'OVER'}); whole-overlay baseline {bmed:6.2f} ms "
                  f"→ {bmed / med:5.1f}× faster; undo of the stroke {undo_ms:5.2f} ms, "
                  f"its patch {held / 1024:.0f} KiB (mask {SIZE * SIZE / 1024:.0f} KiB)")
            edit, comp, paint = (statistics.median(c) for c in zip(*parts, strict=True))
            print(f"      of a step: edit {edit:.2f} ms, re-compose {comp:.2f} ms, repaint {paint:.2f} ms")


if __name__ == "__main__":
    main()
