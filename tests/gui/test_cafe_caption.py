"""A CAFE panel's caption names the instance its max IoU comes from when that is not the one
that decided the class, as the readout card does ("max IoU 0.993 (its s 0.43 < t, not drawn)"):
the caption alone never reads as one instance's figures."""

from __future__ import annotations

from PySide6.QtCore import Qt

from masklens.gui.cards.cafe import decisive_instance, instance_note, owners


def test_the_negative_panel_caption_says_whose_max_iou_it_is(window, qtbot, no_internal_errors):
    w = window
    assert w.commands.open_demo("cafe", sync=True)
    qtbot.waitUntil(lambda: bool(w.state.readouts), timeout=20000)
    t, tau = w.state.params["score_threshold"], w.state.params["iou_threshold"]
    rows = w.state.readouts[w.state.active]

    def mixed(rec) -> bool:  # the max IoU comes from another instance than the decisive one
        ins = rec["neg_instances"]
        return bool(ins) and owners(ins)[1] != decisive_instance(rec["neg_class"], ins, t, tau)[0]

    target = next(i for i, rec in enumerate(rows) if mixed(rec))
    table = w.browser.table
    table.setFocus(Qt.FocusReason.OtherFocusReason)
    while w.state.index != target:  # as a user moves down the list
        qtbot.keyClick(table, Qt.Key.Key_Down if w.state.index < target else Qt.Key.Key_Up)
    rec = w.state.readout()
    ins = rec["neg_instances"]
    decisive = decisive_instance(rec["neg_class"], ins, t, tau)[0]
    note = instance_note(owners(ins)[1], decisive, ins, t, of_score=False)
    assert note  # "(its s … < t, not drawn)" or "(its s …)"
    panel = w.sample_view.panels[1]  # p⁻, beside p⁺
    qtbot.waitUntil(lambda: f"max IoU {rec['neg_max_iou']:.3f}{note}" in panel.caption.text(), timeout=5000)
    assert panel.caption.text().startswith(rec["neg_class"])
