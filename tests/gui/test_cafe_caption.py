"""The CAFE panel caption never reads two instances' figures as one's: when the max IoU is
another instance's than the max s, it says that instance's score, as the card does."""

from __future__ import annotations

from PySide6.QtCore import Qt
from test_gui_defects import focus, open_demo


def test_the_negative_caption_names_the_score_of_the_max_iou_instance(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    table = w.browser.table
    focus(w, qtbot, table)
    for _ in range(5):  # sample 6: the negative prompt's best-IoU instance scores 0.43 (not drawn)
        qtbot.keyClick(table, Qt.Key.Key_Down)
    qtbot.waitUntil(lambda: w.state.index == 5, timeout=3000)
    neg = w.sample_view.panels[1]
    qtbot.waitUntil(lambda: neg.caption.text().startswith("UA-FP"), timeout=5000)
    assert neg.caption.text().startswith("UA-FP · max s 0.99 · max IoU 0.993 (its s 0.43 < t, not drawn)"), neg.caption.text()
    pos = w.sample_view.panels[0]
    assert "(its s" not in pos.caption.text()  # one instance gives both figures there


def test_the_caption_writes_the_note_as_the_card_does_without_qt():
    """The caption's note is the card's (one rule): a score just below t keeps the decimals that
    show it below ("0.499 < t", never "0.50 < t"); the views import no Qt widgets for it."""
    import subprocess
    import sys

    from masklens.core.schema import Prompt, Role, Sample
    from masklens.gui.views.builtin import CafeView

    prompt = Prompt(id="n", text="cat", role=Role.NEGATIVE, image="img", gt=None)
    readout = {"neg_class": "UA-FP", "neg_max_score": 0.9, "neg_max_iou": 0.8,
               "neg_instances": [{"score": 0.9, "iou": 0.1}, {"score": 0.499, "iou": 0.8}]}
    sample = Sample(id="s", images={}, gts={}, prompts=[prompt])
    text = CafeView().caption_at(sample, prompt, readout, {"score_threshold": 0.5})
    assert text == "UA-FP · max s 0.90 · max IoU 0.800 (its s 0.499 < t, not drawn)"
    code = ("import sys, masklens.gui; before = set(sys.modules); import masklens.gui.views.builtin; "
            "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] in ('PySide6', 'shiboken6')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.strip() == "[]"
