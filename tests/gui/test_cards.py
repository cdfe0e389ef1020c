"""Readout cards in the real window: for every demo kind, step through the samples with the keyboard
and check each card's verdict and numbers against the core scorer's record for that sample; tooltips,
the Details toggle (mouse click), hover highlighting on the canvas, and typed-prompt cards."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLabel

from masklens.core.kinds.demo import demo_kinds, demo_namespace
from masklens.core.schema import Role
from masklens.core.scoring.contract import Scorer, get_kind
from masklens.core.scoring.readout import benchmark_readout
from masklens.gui.cards import card_for, registered_kinds
from masklens.gui.cards.cafe import decisive_instance
from masklens.gui.cards.generic import GenericCard, GenericReadoutCard
from masklens.gui.cards.highlight import HIGHLIGHT_LAYER
from masklens.gui.cards.widgets import Badge
from masklens.gui.prompts.prompt_bar import PromptRequest

KINDS = ["cafe", "hallusegbench", "cgebench", "r2sm", "pcs", "ovs"]


def core_result(kind_name: str, params: dict[str, float]):
    """The core scorer's result for the demo, computed here, independently of the window."""
    kind = get_kind(kind_name)
    ns = demo_namespace(kind_name)
    bench = kind.load_benchmark(**vars(ns))
    return Scorer(kind, bench, kind.load_predictions(bench, **vars(ns))).rescore(params)


def open_demo(window, qtbot, kind: str):
    assert window.commands.open_demo(kind, sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    qtbot.waitExposed(window)
    return window.readout_panel.deck


def step_samples(window, qtbot, limit: int):
    """Click the first row of the sample list, then press Down: yields each sample index reached."""
    table = window.browser.table
    rect = table.visualRect(table.model().index(0, 1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    seen = []
    for _ in range(limit):
        seen.append(window.state.index)
        yield window.state.index
        qtbot.keyClick(table, Qt.Key.Key_Down)
        if window.state.index in seen:  # the end of the list
            break


# ------------------------------------------------------------------ per-kind checks
def check_cafe(card, rec, params, sample):
    t, tau = params["score_threshold"], params["iou_threshold"]
    for side in ("pos", "neg"):
        assert card.texts[f"{side}_class"] == rec[f"{side}_class"]
        assert card.numbers[f"{side}_max_iou"] == rec[f"{side}_max_iou"]
        assert card.texts[f"{side}_max_iou"].startswith(f"{rec[f'{side}_max_iou']:.3f}")
        assert card.numbers[f"{side}_max_score"] == rec[f"{side}_max_score"]
        i = card.numbers[f"{side}_instance"]
        insts = rec[f"{side}_instances"]
        if i is None:
            assert not insts
            continue
        s, v = insts[i]["score"], insts[i]["iou"]
        cls = rec[f"{side}_class"]
        # the highlighted instance satisfies the record's class condition (thresholds inclusive)
        if cls in ("TA-TP", "TA-FP"):
            assert s >= t and v >= tau
        elif cls in ("UA-P", "UA-FP"):
            assert s >= t and v < tau
        elif cls == "TA-FN":
            assert s < t and v >= tau
        else:  # UA-FN, TN: nothing accepted
            assert all(x["score"] < t for x in insts)
    badges = [b.verdict for b in card.badges]
    assert badges == [rec["pos_class"], rec["neg_class"]]
    for key in ("SoftSwap", "ACS", "UCS"):
        assert card.numbers[key] == rec[key]
        assert card.texts[key] == (key if rec[key] else f"no {key}")


def check_hallu(card, rec, params, sample):
    for key in ("IoU_fact", "IoU_textual", "IoU_visual", "dIoU_textual", "dIoU_visual", "CMS_fact",
                "CMS_counterfact"):
        assert card.numbers[key] == rec[key]
    for name, cms in (("textual", "CMS_fact"), ("visual", "CMS_counterfact")):
        v = rec[cms]
        assert card.texts[name] == ("no prediction" if v is None else "no hallucination" if v == 0
                                    else f"{name} hallucination")


def check_cge(card, rec, params, sample):
    for lv in rec["levels"]:
        k = lv["level"]
        assert card.numbers[f"IoGT_p{k}"] == lv["IoGT"]
        assert card.numbers[f"cumulative_p{k}"] == lv["cumulative"]
        assert card.texts[f"outcome_p{k}"] == lv["outcome"]
    assert card.texts["c_line"] == " → ".join(f"{lv['cumulative']:.2f}" for lv in rec["levels"])


def check_r2sm(card, rec, params, sample):
    for q in rec["queries"]:
        pid = q["prompt_id"]
        assert card.numbers[f"IoU_{pid}"] == q["IoU"]
        assert card.numbers[f"IoU_other_{pid}"] == q["IoU_other"]
        assert card.numbers[f"wrong_type_{pid}"] == q["wrong_type"]
        other = "modal" if q["requested"] == "amodal" else "amodal"
        flag = card.texts[f"type_{pid}"]
        assert (flag == f"answered with the {other} mask") == q["wrong_type"]
    assert card.numbers["gIoU"] == rec["gIoU"]


def check_pcs(card, rec, params, sample):
    assert card.texts["IL"] == f"IL {rec['IL']}"
    for key in ("TP@0.5", "FP@0.5", "FN@0.5", "TP@0.75", "local_F1"):
        assert card.numbers[key] == rec[key]
    insts = rec["instances"]
    if insts:
        table = card.instance_table
        assert table.rowCount() == len(insts) and table.columnCount() == 6
        for r, inst in enumerate(insts):
            assert table.item(r, 5).text() == f"{inst['iou']:.3f}"  # best IoU, from the record
            assert table.item(r, 2).text() == ("✔ yes" if inst["accepted"] else "✖ no")
        # the match column is the assignment cgF1 counts: its IoUs ≥ 0.5 / 0.75 are TP@0.5 / TP@0.75
        ious = [m["iou"] for m in card.matches if m["iou"] is not None]
        assert sum(v >= 0.5 for v in ious) == rec["TP@0.5"]
        assert sum(v >= 0.75 for v in ious) == rec["TP@0.75"]
        assert all(m["accepted"] for m in card.matches if m["gt"] is not None)
        shown = [table.item(r, 4).text() for r in range(len(insts))]
        assert sum(text.startswith("✔") for text in shown) == rec["TP@0.5"]


def check_ovs(card, rec, params, sample, summary):
    star = summary["all"]["tau_star"]
    assert card.numbers["tau_star"] == star
    at = rec["thresholds"][f"{star:.1f}"]
    assert card.numbers["front_tau_star"] == at["front"]
    assert card.numbers["err_tau_star"] == at["err"]
    assert card.numbers["back_all"] == summary["all"]["back"]
    assert card.numbers["outmatched_tau_star"] == len(at["outmatched"])
    table = card.threshold_table
    assert table.rowCount() == len(rec["thresholds"])
    for r, (tau, vals) in enumerate(rec["thresholds"].items()):
        assert table.item(r, 0).text().split()[0] == tau
        assert table.item(r, 2).text() == f"{vals['err']:.3f}"


CHECKS = {"cafe": check_cafe, "hallusegbench": check_hallu, "cgebench": check_cge, "r2sm": check_r2sm,
          "pcs": check_pcs}


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_card_equals_the_core_record(window, qtbot, kind):
    assert kind in demo_kinds()
    deck = open_demo(window, qtbot, kind)
    params = dict(window.state.params)
    result = core_result(kind, params)
    verdicts = set()
    for index in step_samples(window, qtbot, 70):  # every sample of each demo
        card = deck.main_card
        assert type(card) is card_for(kind) and type(card).__module__.endswith(f"cards.{kind}")
        rec = result.samples[index]
        sample = window.state.benchmark.samples[index]
        if kind == "ovs":
            check_ovs(card, rec, params, sample, result.summary)
        else:
            CHECKS[kind](card, rec, params, sample)
        verdicts.update(b.verdict for b in card.badges)
        # every number and verdict carries its definition as a tooltip
        assert card.badges and all(b.toolTip() for b in card.badges)
        assert all(card.tooltips.values())
        for label in card.findChildren(QLabel):
            if re.fullmatch(r"-?\d+(\.\d+)?", label.text()):
                assert label.toolTip(), f"{kind}: number {label.text()} without a tooltip"
    assert len(verdicts) >= 2, f"{kind}: the demo walk saw one verdict only: {verdicts}"


def test_cafe_reason_in_the_papers_words(window, qtbot):
    deck = open_demo(window, qtbot, "cafe")
    card = deck.main_card
    rec = window.state.readout()
    i = card.numbers["pos_instance"]
    inst = rec["pos_instances"][i]
    if rec["pos_class"] == "TA-TP":
        assert card.reasons[0] == f"s {inst['score']:.2f} ≥ t 0.50, IoU {inst['iou']:.3f} ≥ τ 0.30"


def test_decisive_instance_reasons():
    insts = [{"score": 0.499, "iou": 0.9}, {"score": 0.2, "iou": 0.1}]
    assert decisive_instance("TA-FN", insts, 0.5, 0.3) == (0, "IoU 0.900 ≥ τ 0.30, but s 0.499 < t 0.50")
    assert decisive_instance("TN", insts, 0.5, 0.3) == (0, "rejected: max s 0.499 < t 0.50")
    assert decisive_instance("TN", [], 0.5, 0.3) == (None, "no instance predicted (rejected)")
    acc = [{"score": 0.5, "iou": 0.3}, {"score": 0.9, "iou": 0.1}]  # inclusive thresholds
    assert decisive_instance("TA-TP", acc, 0.5, 0.3) == (0, "s 0.50 ≥ t 0.50, IoU 0.300 ≥ τ 0.30")
    assert decisive_instance("UA-FP", acc[1:], 0.5, 0.3) == (0, "s 0.90 ≥ t 0.50, but IoU 0.100 < τ 0.30")
    two = [{"score": 0.6, "iou": 0.05}, {"score": 0.7, "iou": 0.2}]
    assert decisive_instance("UA-P", two, 0.5, 0.3) == (
        1, "s 0.70 ≥ t 0.50, but IoU 0.200 < τ 0.30 (best of 2 accepted)")
    assert decisive_instance("UA-FN", insts, 0.5, 0.95) == (
        0, "max s 0.499 < t 0.50; max IoU 0.900 < τ 0.95")


def test_slider_move_updates_the_card_from_the_scorer(window, qtbot):
    deck = open_demo(window, qtbot, "cafe")
    window.readout_panel.sliders.set_value("score_threshold", 1.0)
    rec = window.state.readout()
    assert core_result("cafe", dict(window.state.params)).samples[window.state.index] == rec
    assert deck.main_card.texts["pos_class"] == rec["pos_class"] != "TA-TP"
    assert deck.main_card.texts["neg_class"] == "TN"  # nothing reaches s ≥ 1.0 here
    assert deck.main_card.badges[1].text() == "✔ TN"


def test_details_expand_with_a_mouse_click(window, qtbot):
    open_demo(window, qtbot, "r2sm")
    panel = window.readout_panel
    assert not panel.tree.isVisible()  # collapsed by default: the card first
    qtbot.mouseClick(panel.details, Qt.MouseButton.LeftButton)
    assert panel.tree.isVisible() and panel.details.isChecked()
    title = f"{window.state.kind.title} · {window.state.active}"
    assert panel.value_of(title, "gIoU") == f"{window.state.readout()['gIoU']:.3f}"
    qtbot.mouseClick(panel.details, Qt.MouseButton.LeftButton)
    assert not panel.tree.isVisible()


def test_hovering_a_verdict_highlights_its_instance(window, qtbot):
    deck = open_demo(window, qtbot, "cafe")
    card = deck.main_card
    frame, prompt_id, index = card.hover_rows[-1]  # the negative prompt's decisive instance
    panel = next(p for p, s in zip(window.sample_view.panels, window.sample_view.specs, strict=True)
                 if s.prompt_id == prompt_id)
    before = panel.canvas.grab().toImage()
    assert HIGHLIGHT_LAYER not in panel.canvas.layer_names()
    qtbot.mouseMove(window, QPoint(5, 5))
    qtbot.mouseMove(frame)
    qtbot.waitUntil(lambda: HIGHLIGHT_LAYER in panel.canvas.layer_names(), timeout=3000)
    assert panel.canvas.grab().toImage() != before  # the canvas draws something else
    # the highlight covers exactly the decisive instance's box
    inst = window.state.predictions().get(prompt_id).instances[index]
    item = panel.canvas._layers[HIGHLIGHT_LAYER]
    x, y, w, h = inst.mask.bbox
    assert (item.offset().x(), item.offset().y()) == (x, y)
    assert (item.pixmap().width(), item.pixmap().height()) == (w, h)
    qtbot.mouseMove(window, QPoint(5, 5))
    qtbot.waitUntil(lambda: HIGHLIGHT_LAYER not in panel.canvas.layer_names(), timeout=3000)


def test_cgebench_hypernym_typed_card_shows_iogt_and_ck(window, qtbot):
    deck = open_demo(window, qtbot, "cgebench")
    st = window.state
    window.commands.run_prompt(PromptRequest("shape", Role.HYPERNYM, 2, None, "demo"), sync=True)
    qtbot.waitUntil(lambda: len(deck.typed) == 1, timeout=20000)
    r, original, typed = deck.typed[0]
    replaced = next(p for p in st.sample.prompts if p.id == r.replaced)
    assert replaced.level == 2
    # the typed record is the core scorer's, with the typed prompt in place of p2
    again = benchmark_readout(st.kind, st.sample, r.prompt, r.prediction, st.params, st.predictions())
    assert again == r.benchmark
    lv = next(v for v in r.benchmark["levels"] if v["prompt_id"] == r.replaced)
    assert typed.numbers == {"IoGT_p2": lv["IoGT"], "cumulative_p2": lv["cumulative"]}
    assert typed.texts["outcome_p2"] == lv["outcome"] and typed.badges[0].verdict == lv["outcome"]
    assert "iou" not in typed.numbers  # not the generic IoU
    orig = next(v for v in st.readout()["levels"] if v["prompt_id"] == r.replaced)
    assert original is not None and original.numbers["IoGT_p2"] == orig["IoGT"]
    # side by side: the two cards share a row
    assert original.parentWidget() is typed.parentWidget()
    assert original.mapTo(deck.widget(), QPoint(0, 0)).y() == typed.mapTo(deck.widget(), QPoint(0, 0)).y()


def test_cafe_typed_negative_rejected_reads_tn(window, qtbot):
    deck = open_demo(window, qtbot, "cafe")
    window.commands.run_prompt(PromptRequest("ladybug", Role.NEGATIVE, None, None, "demo"), sync=True)
    qtbot.waitUntil(lambda: len(deck.typed) == 1, timeout=20000)
    r, original, typed = deck.typed[0]
    assert r.benchmark is not None
    assert [b.verdict for b in typed.badges] == [r.benchmark["neg_class"]]
    assert r.benchmark["neg_class"] == "TN"  # the demo model finds no ladybug: correctly rejected
    assert typed.badges[0].text() == "✔ TN"
    assert typed.reasons[0] == "no instance predicted (rejected)" and "IoU" not in typed.reasons[0]
    assert [b.verdict for b in original.badges] == [window.state.readout()["neg_class"]]
    labels = lambda card: " ".join(label.text() for label in card.findChildren(QLabel))  # noqa: E731
    assert "“ladybug”" in labels(typed) and "“ladybug”" not in labels(original)


def test_typed_prompt_without_a_role_to_replace_gets_the_generic_card(window, qtbot):
    deck = open_demo(window, qtbot, "cafe")
    window.commands.run_prompt(PromptRequest("square", Role.HYPERNYM, 1, None, "demo"), sync=True)
    qtbot.waitUntil(lambda: len(deck.typed) == 1, timeout=20000)
    r, original, typed = deck.typed[0]
    assert r.benchmark is None and original is None and isinstance(typed, GenericReadoutCard)
    assert typed.numbers["iou"] == r.generic["iou"]


def test_every_builtin_kind_has_its_card_and_others_fall_back(toy_window):
    assert set(KINDS) <= set(registered_kinds())
    assert card_for("no-such-kind") is GenericCard
    card = toy_window.readout_panel.deck.main_card  # the toy kind has no card of its own
    assert isinstance(card, GenericCard) and card.numbers["id"] == toy_window.state.readout()["id"]


def test_badges_carry_a_glyph_besides_the_colour(qtbot):
    from masklens.gui.cards.widgets import Tone

    glyphs = {t.glyph for t in Tone}
    assert len(glyphs) == len(Tone)
    b = Badge("TA-FP", Tone.FAIL)
    b.resize(b.sizeHint())
    assert b.text() == "✖ TA-FP"
    img = b.grab().toImage()
    fill = sum(img.pixelColor(x, y).name() == "#d55e00" for x in range(img.width()) for y in range(img.height()))
    assert fill > 0.4 * img.width() * img.height()  # the pill is filled in vermillion


def test_cge_card_tells_iogt_from_the_cumulative_line(qtbot):
    """A hierarchy whose p1 and p2 each cover a different half of G: IoGT 0.5 at both, c(2) = 0."""
    import numpy as np

    from masklens.core.masks import Mask
    from masklens.core.schema import Instance, Prediction
    from masklens.gui.cards import CardContext

    kind = get_kind("cgebench")
    ns = demo_namespace("cgebench")
    bench = kind.load_benchmark(**vars(ns))
    preds = kind.load_predictions(bench, **vars(ns))
    sample = bench.samples[0]
    g = sample.gts["G"].union().to_array()
    ys, _ = np.nonzero(g)
    top = g.copy()
    top[ys.min() + (ys.max() - ys.min()) // 2:] = False
    bottom = g & ~top
    for level, part in ((1, top), (2, bottom)):
        pid = next(p.id for p in sample.prompts if p.level == level)
        preds.by_prompt[pid] = Prediction(pid, [Instance(mask=Mask.from_array(part), score=0.9)])
    rec = Scorer(kind, bench, preds).readouts()[0]
    levels = {lv["level"]: lv for lv in rec["levels"]}
    assert levels[2]["cumulative"] == 0.0 < levels[2]["IoGT"] < 1.0  # the scorer's numbers
    card = card_for("cgebench")(rec, CardContext(kind, sample, kind.default_params()))
    qtbot.addWidget(card)
    for k, lv in levels.items():
        assert card.numbers[f"IoGT_p{k}"] == lv["IoGT"]
        assert card.numbers[f"cumulative_p{k}"] == lv["cumulative"]
        assert card.texts[f"outcome_p{k}"] == lv["outcome"]
    assert card.texts["outcome_p2"] == "partial"
    assert card.badges[0].verdict.startswith("zero: c(3)")


def test_ovs_summary_of_a_large_benchmark_arrives_from_the_worker_pool(window, qtbot, monkeypatch):
    from masklens.gui.cards import deck as deck_module

    monkeypatch.setattr(deck_module, "SYNC_SUMMARY_LIMIT", 0)  # every benchmark counts as large
    deck = open_demo(window, qtbot, "ovs")
    qtbot.waitUntil(lambda: deck.main_card.numbers.get("tau_star") is not None, timeout=20000)
    expect = core_result("ovs", dict(window.state.params)).summary["all"]["tau_star"]
    assert deck.main_card.numbers["tau_star"] == expect
    window.readout_panel.sliders.set_value("av_threshold", 0.2)  # a new summary is requested
    qtbot.waitUntil(lambda: deck._pending is None and deck._summary_key is not None
                    and deck._summary_key[2] == tuple(sorted(window.state.params.items())), timeout=20000)
    expect = core_result("ovs", dict(window.state.params)).summary["all"]
    assert deck.main_card.numbers["tau_star"] == expect["tau_star"]
    assert deck.main_card.numbers["back_all"] == expect["back"]


def test_hovering_an_instance_row_highlights_it(window, qtbot):
    deck = open_demo(window, qtbot, "pcs")
    card = deck.main_card
    table = card.instance_table
    prompt_id = window.state.sample.prompts[0].id
    panel = next(p for p, s in zip(window.sample_view.panels, window.sample_view.specs, strict=True)
                 if s.prompt_id == prompt_id)
    qtbot.mouseMove(window, QPoint(5, 5))
    qtbot.mouseMove(table.viewport(), table.visualItemRect(table.item(0, 1)).center())
    qtbot.waitUntil(lambda: HIGHLIGHT_LAYER in panel.canvas.layer_names(), timeout=3000)
    inst = window.state.predictions().get(prompt_id).instances[0]
    item = panel.canvas._layers[HIGHLIGHT_LAYER]
    assert (item.offset().x(), item.offset().y()) == tuple(inst.mask.bbox[:2])


def test_tab_focus_on_a_verdict_highlights_like_a_hover(window, qtbot):
    deck = open_demo(window, qtbot, "cafe")
    frame, prompt_id, _index = deck.main_card.hover_rows[0]
    panel = next(p for p, s in zip(window.sample_view.panels, window.sample_view.specs, strict=True)
                 if s.prompt_id == prompt_id)
    window.activateWindow()
    frame.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(lambda: HIGHLIGHT_LAYER in panel.canvas.layer_names(), timeout=3000)
    window.browser.table.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(lambda: HIGHLIGHT_LAYER not in panel.canvas.layer_names(), timeout=3000)


def test_hallu_card_with_a_missing_prediction_says_so(qtbot):
    """A missing prediction is skipped by the scorer (null, not 0): the card shows "no prediction"
    with the record's reason, and no number."""
    from masklens.gui.cards import CardContext

    kind = get_kind("hallusegbench")
    ns = demo_namespace("hallusegbench")
    bench = kind.load_benchmark(**vars(ns))
    preds = kind.load_predictions(bench, **vars(ns))
    sample = bench.samples[4]
    gone = next(p.id for p in sample.prompts if p.role == Role.NEGATIVE and p.image == "factual")
    del preds.by_prompt[gone]
    preds.missing.add(gone)
    rec = Scorer(kind, bench, preds).readouts()[4]
    assert rec["CMS_fact"] is None and rec["IoU_textual"] is None  # the scorer's reading
    card = card_for("hallusegbench")(rec, CardContext(kind, sample, kind.default_params()))
    qtbot.addWidget(card)
    assert card.texts["textual"] == "no prediction"
    assert card.numbers["CMS_fact"] is None and card.texts["CMS_fact"] == "–"
    assert card.numbers["dIoU_textual"] == rec["dIoU_textual"] is None
    assert card.texts["visual"] == ("no hallucination" if rec["CMS_counterfact"] == 0 else "visual hallucination")


def test_cards_follow_the_state_when_another_benchmark_opens(window, qtbot):
    deck = open_demo(window, qtbot, "r2sm")
    window.commands.run_prompt(PromptRequest("the whole blue square", Role.AMODAL, None, None, "demo"), sync=True)
    qtbot.waitUntil(lambda: len(deck.typed) == 1, timeout=20000)
    window.tabs.setCurrentIndex(0)  # the Compare tab's live panels must not go stale
    window.commands.open_demo("cgebench", sync=True)
    qtbot.waitUntil(lambda: window.state.kind.name == "cgebench" and bool(window.state.readouts), timeout=20000)
    assert type(deck.main_card) is card_for("cgebench") and deck.typed == []
    rec = core_result("cgebench", dict(window.state.params)).samples[window.state.index]
    check_cge(deck.main_card, rec, window.state.params, window.state.sample)


def test_a_bound_panel_follows_the_state_on_its_own(qtbot):
    """No main window: the Readout panel bound to an AppState shows the record of each sample."""
    from masklens.gui.state import AppState
    from masklens.gui.window.readout_panel import ReadoutPanel

    state = AppState()
    panel = ReadoutPanel()
    qtbot.addWidget(panel)
    panel.bind(state, list)
    kind = get_kind("r2sm")
    ns = demo_namespace("r2sm")
    bench = kind.load_benchmark(**vars(ns))
    preds = kind.load_predictions(bench, **vars(ns))
    state.set_benchmark(kind, bench, ns)
    assert panel.deck.main_card is None  # no predictions yet
    scorer = Scorer(kind, bench, preds)
    state.add_predictions("demo", preds, scorer)
    for i in (0, 6, 9):
        state.set_index(i)
        check_r2sm(panel.deck.main_card, scorer.readouts(state.params)[i], state.params, bench.samples[i])
