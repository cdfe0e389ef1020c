"""Issue 21, defects 4 and 16: numbers on screen agree with each other and with the command line —
sliders snap to the precision they show, a comparison shows the digits that decide it, α = 3 is
reachable by keyboard, and a CAFE card names the instance each figure comes from."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QAbstractSpinBox

from masklens.core.kinds.demo import demo_namespace
from masklens.core.masks import Mask
from masklens.core.schema import Instance, Prediction, Role
from masklens.core.scoring.contract import Scorer, get_kind
from masklens.gui.cards import CardContext, card_for

pytest.importorskip("masklens.core.kinds.demo")


def _demo(kind_name: str):
    kind = get_kind(kind_name)
    ns = demo_namespace(kind_name)
    bench = kind.load_benchmark(**vars(ns))
    return kind, bench, kind.load_predictions(bench, **vars(ns))


def test_cafe_ua_fp_card_names_the_instance_of_each_figure(qtbot):
    """p⁻ with an accepted instance off the target (s 0.81, IoU 0) and a rejected one on it (s 0.30,
    IoU 1): the max IoU row says its 1.000 comes from the instance scored 0.30, not drawn."""
    kind, bench, preds = _demo("cafe")
    sample = bench.samples[0]
    target = sample.gts["target"].union().to_array()
    off = np.zeros_like(target)
    off[:4, :4] = True
    assert not (off & target).any()
    neg = next(p for p in sample.prompts if p.role is Role.NEGATIVE)
    preds.by_prompt[neg.id] = Prediction(neg.id, [Instance(mask=Mask.from_array(off), score=0.81),
                                                  Instance(mask=Mask.from_array(target), score=0.30)])
    params = kind.default_params()
    rec = Scorer(kind, bench, preds).readouts(params)[0]  # the core's record of sample 0
    assert rec["neg_class"] == "UA-FP" and rec["neg_max_iou"] == 1.0
    card = card_for("cafe")(rec, CardContext(kind, sample, params))
    qtbot.addWidget(card)
    assert card.reasons[-1] == "s 0.81 ≥ t 0.50, but IoU 0.000 < τ 0.30"
    assert card.texts["neg_max_iou"] == "1.000  (its s 0.30 < t, not drawn)"
    assert card.texts["neg_max_score"] == "0.81  (its IoU 0.000)"


def test_pcs_instance_table_shows_the_digits_that_decide_s_at_t(qtbot):
    kind, bench, preds = _demo("pcs")
    i, sample = next((i, s) for i, s in enumerate(bench.samples) if preds.by_prompt.get(s.prompts[0].id)
                     and preds.by_prompt[s.prompts[0].id].instances)
    pid = sample.prompts[0].id
    inst = preds.by_prompt[pid].instances[0]
    preds.by_prompt[pid] = Prediction(pid, [Instance(mask=inst.mask, score=0.4989)])
    rec = Scorer(kind, bench, preds).readouts()[i]
    card = card_for("pcs")(rec, CardContext(kind, sample, kind.default_params()))
    qtbot.addWidget(card)
    from PySide6.QtWidgets import QTableWidget

    table = card.findChild(QTableWidget)
    assert table.item(0, 1).text() == "0.499" and table.item(0, 2).text() == "✖ no"
