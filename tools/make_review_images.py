"""Render the corrections and team-review screenshots of docs/review-and-reports.md and docs/gui.md.

    QT_QPA_PLATFORM=offscreen python tools/make_review_images.py [--out DIR]

On the CAFE demo, in a throw-away data folder (the review store goes there): ana flags a
sample "Ground truth wrong" and paints a correction, the "Corrected ground truth" switch is
turned on (docs/images/gui_corrected.png: canvas, original and corrected cards, summary); then
an assignment to ana, ben and eve and ben's store with a planted disagreement merged in
(docs/images/gui_disagreements.png: the Review dock).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "docs" / "images"))
    out = Path(ap.parse_args().out)
    tmp = Path(tempfile.mkdtemp())
    os.environ["XDG_DATA_HOME"] = str(tmp / "data")
    os.environ["MASKLENS_CONFIG_DIR"] = str(tmp / "config")
    import numpy as np
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from masklens.core.masks import Mask
    from masklens.core.review.locations import benchmark_key
    from masklens.core.review.store import Role, open_store
    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    w = MainWindow(Settings(), persist=False)
    w.resize(1700, 1000)
    w.show()
    w.commands.open_demo("cafe", sync=True)
    w.review_panel.reviewer.setText("ana")
    w.state.set_index(2)
    key = benchmark_key(w.state.benchmark)
    sample, gt_key = w.state.sample, w.sample_view.specs[0].gts[0]
    w.review_panel.record("gt_wrong")
    m = sample.gts[gt_key].masks[0].to_array().astype(bool).copy()
    ys, xs = np.nonzero(m)
    m[ys.min():ys.max() + 1, max(xs.min() - 40, 0):xs.min() + 5] = True  # the part the annotator missed
    w.corrections_link.persist(sample.id, gt_key, 0, Mask.from_array(m), ["brush"])
    w.corrected_view.action.setChecked(True)
    w.readout_dock.raise_()

    for _ in range(5):
        app.processEvents()
    w.resizeDocks([w.browser_dock, w.readout_dock], [430, 640], Qt.Orientation.Horizontal)
    for _ in range(5):
        app.processEvents()
    w.grab().save(str(out / "gui_corrected.png"))
    # team: an assignment, ben's store with a different verdict merged in
    with open_store(tmp / "ben.sqlite", Role.WRITE, reviewer="ben") as ben:
        ben.record(key, sample.id, "fine")
        for sid in [s.id for s in w.state.benchmark.samples][:4]:
            ben.record(key, sid, "fine")
    store = w.state.review_store
    for sid in [s.id for s in w.state.benchmark.samples][:4]:
        store.record(key, sid, "fine", reviewer="ana")
    store.record(key, w.state.benchmark.samples[2].id, "model_wrong", reviewer="ana")
    store.assign(key, [s.id for s in w.state.benchmark.samples], ["ana", "ben", "eve"], overlap=0.2, seed=3)
    store.merge(tmp / "ben.sqlite")
    w.corrected_view.action.setChecked(False)
    w.commands.open_demo("cafe", sync=True)  # read the merged store
    w.review_panel.reviewer.setText("ana")
    w.review_panel.request_next_unreviewed()
    w.team.refresh()
    w.review_dock.raise_()
    w.resizeDocks([w.readout_dock, w.live_dock], [330, 640], Qt.Orientation.Vertical)
    labels = [f.label for f in w.browser._filters]
    w.browser.presets.setCurrentIndex(labels.index("Disagreements"))
    for _ in range(5):
        app.processEvents()
    w.grab().save(str(out / "gui_disagreements.png"))
    w.close()
    print(f"wrote {out / 'gui_corrected.png'} and {out / 'gui_disagreements.png'}")


if __name__ == "__main__":
    main()
