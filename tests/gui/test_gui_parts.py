"""Overlays, settings, the open dialog, the demo and the screenshot command."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
import toykind
from PySide6.QtGui import QColor, QImage

from masklens.gui.canvas import overlays
from masklens.gui.settings import SETTINGS_VERSION, Settings


def test_error_labels_and_colours():
    gt = np.zeros((4, 4), bool)
    pred = np.zeros((4, 4), bool)
    gt[:2] = True
    pred[1:3] = True
    lab = overlays.error_labels(gt, pred)
    assert lab[0, 0] == 1 and lab[1, 0] == 3 and lab[2, 0] == 2 and lab[3, 0] == 0  # FN, TP, FP, none
    img = overlays.indexed_image(lab, overlays.error_table("#009E73", "#D55E00", "#56B4E9", 1.0))
    argb = img.convertToFormat(QImage.Format.Format_ARGB32)
    assert QColor(argb.pixel(0, 1)).name() == "#009e73"  # TP
    assert QColor(argb.pixel(0, 2)).name() == "#d55e00"  # FP
    assert QColor(argb.pixel(0, 0)).name() == "#56b4e9"  # FN
    assert QColor.fromRgba(argb.pixel(0, 3)).alpha() == 0


def test_outline_and_instance_labels():
    m = np.zeros((10, 10), bool)
    m[2:8, 2:8] = True
    edge = overlays.outline(m, 1)
    assert edge[2, 2] and edge[7, 5] and not edge[4, 4] and not edge[0, 0]
    assert edge.sum() == 36 - 16
    m2 = np.zeros((10, 10), bool)
    m2[5:10, 5:10] = True
    lab = overlays.instance_labels([m, m2], outlines=True, width=1)
    assert lab[4, 4] == 1 and lab[9, 9] == 128 + 2 and lab[7, 7] == 2  # later instance on top
    assert lab[0, 0] == 0


def test_rgb_image_is_a_copy():
    rgb = np.zeros((3, 5, 3), np.uint8)
    rgb[..., 0] = 255
    img = overlays.rgb_image(rgb)
    rgb[...] = 0
    assert (img.width(), img.height()) == (5, 3) and QColor(img.pixel(4, 2)).red() == 255


def test_settings_roundtrip_versioned_and_atomic(tmp_path):
    path = tmp_path / "s.json"
    s = Settings()
    s.params["toy"] = {"score_threshold": 0.7}
    s.add_recent("toy", ["--ann", "a.json"], "Toy: a")
    s.add_recent("toy", ["--ann", "a.json"], "Toy: a")  # no duplicates
    s.save(path)
    data = json.loads(path.read_text())
    assert data["version"] == SETTINGS_VERSION and len(data["recent"]) == 1
    assert list(tmp_path.iterdir()) == [path]  # no temp file left behind
    loaded, warn = Settings.load(path)
    assert warn is None and loaded.params == {"toy": {"score_threshold": 0.7}}


def test_corrupt_or_old_settings_fall_back_with_a_warning(tmp_path):
    path = tmp_path / "s.json"
    path.write_text("{broken")
    s, warn = Settings.load(path)
    assert s == Settings() and "settings ignored" in warn and str(path) in warn
    path.write_text(json.dumps({"version": 0, "gt_opacity": 0.2, "model": 5}))
    s, warn = Settings.load(path)
    assert s.gt_opacity == 0.2 and s.model == "demo" and "migrated" in warn


def test_window_persists_thresholds_and_model(qtbot, toy, tmp_path):
    from masklens.gui.window.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.commands.open_benchmark("toy", ["--ann", str(toy["ann"]), "--pred", str(toy["pred"])], sync=True)
    w.readout_panel.sliders.set_value("score_threshold", 0.8)
    w.prompt_bar.select_model("toy-colour")
    w.close()
    assert Settings.path().exists()
    w2 = MainWindow()
    qtbot.addWidget(w2)
    assert w2.prompt_bar.model.currentData() == "toy-colour"
    assert w2.settings.recent[0]["kind"] == "toy"
    w2.commands.open_benchmark("toy", w2.settings.recent[0]["argv"], sync=True)
    assert w2.state.params["score_threshold"] == pytest.approx(0.8)
    assert w2.readout_panel.sliders.values()["score_threshold"] == pytest.approx(0.8)


def test_open_dialog_builds_the_form_from_the_kind_arguments(qtbot, toy):
    from masklens.gui.dialogs.open_dialog import OpenDialog, parse_kind_args

    dlg = OpenDialog(kind="toy")
    qtbot.addWidget(dlg)
    assert [f.action.dest for f in dlg.fields] == ["ann", "pred", "images"]
    labels = [dlg.form.labelForField(f.widget).text() for f in dlg.fields]
    # in words, not CLI flags; predictions are optional in the GUI
    assert labels == ["Annotations (required)", "Predictions", "Images folder"]
    assert dlg.error.text() == ""  # no complaint before anything is typed
    dlg.set_value("ann", str(toy["ann"]))
    assert dlg.result_argv() == ["--ann", str(toy["ann"])]
    ns = parse_kind_args(toykind.KIND, dlg.result_argv())
    assert isinstance(ns, argparse.Namespace) and ns.pred is None
    dlg._accept()
    assert dlg.result() == dlg.DialogCode.Accepted
    # a missing required argument is shown in the dialog, which stays open
    dlg2 = OpenDialog(kind="toy")
    qtbot.addWidget(dlg2)
    dlg2._accept()
    assert "--ann" in dlg2.error.text() and dlg2.result() != dlg2.DialogCode.Accepted
    pred_only = OpenDialog(kind="toy", predictions_only=True)
    qtbot.addWidget(pred_only)
    assert [f.action.dest for f in pred_only.fields] == ["pred"]


def test_open_predictions_adds_a_second_replay_layer(toy_window, qtbot, tmp_path):
    w = toy_window
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"sample": "s0", "prompt": 0, "box": [0, 0, 4, 4], "score": 0.99}]))
    assert w.commands.open_predictions(["--pred", str(other)])
    qtbot.waitUntil(lambda: "other.json" in w.state.prediction_sets, timeout=10000)
    assert w.state.active == "other.json"
    assert [w.view_toolbar.sets.itemText(i) for i in range(2)] == ["toy_pred.json", "other.json"]
    assert w.state.readout(0)["positive"]["hit"] is False
    w.view_toolbar.sets.setCurrentText("toy_pred.json")
    assert w.state.active == "toy_pred.json" and w.state.readout(0)["positive"]["hit"] is True


demo = pytest.importorskip("masklens.core.kinds.demo")


@pytest.mark.parametrize("kind", ["cafe", "hallusegbench", "cgebench", "r2sm"])
def test_demo_views_and_demo_model(window, qtbot, kind):
    if kind not in demo.demo_kinds():
        pytest.skip(f"no {kind} demo")
    assert window.commands.open_demo(kind, sync=True)
    s = window.state
    assert s.kind.name == kind and s.readouts, window.message_bar.text
    panels = window.sample_view.panels
    expected = {"cafe": 2, "hallusegbench": 4, "cgebench": 4}.get(kind)
    if expected:
        assert len(panels) == expected
    assert all("gt" in p.canvas.layer_names() for p in panels[:1])
    # captions in the benchmark's own words, from the readout of the shown prediction set
    rec = s.readout()
    words = {"cafe": rec.get("pos_class"), "hallusegbench": "IoU_fact", "cgebench": "IoGT", "r2sm": " vs "}[kind]
    assert words and words in panels[0].caption.text(), panels[0].caption.text()
    # the demo model on one of the sample's own prompts: the readout equals the scorer's
    p = s.sample.prompts[0]
    window.prompt_bar.set_role(p.role, p.level)
    window.prompt_bar.set_text(p.text)
    window.prompt_bar.select_model("demo")
    window.prompt_bar.request_run()
    qtbot.waitUntil(lambda: bool(s.live) and not window.jobs.busy, timeout=30000)
    r = s.live[-1]
    assert r.benchmark is not None and r.replaced is not None
    from masklens.core.scoring.readout import benchmark_readout

    assert r.benchmark == benchmark_readout(s.kind, s.sample, r.prompt, r.prediction, s.params,
                                            s.predictions())


def test_screenshot_command(tmp_path, qtbot):
    from masklens.core.cli import main

    out = tmp_path / "shot.png"
    assert main(["gui", "--demo", "--kind", "cafe", "--screenshot", str(out)]) == 0
    img = QImage(str(out))
    assert img.width() >= 1400 and img.height() >= 900
    assert not (tmp_path / "config" / "gui-settings.json").exists()  # screenshots save nothing


PRESET_CHECKS = {
    "cafe": ("negative prompt is TA-FP", lambda r: r["neg_class"] == "TA-FP"),
    "cgebench": ("IoGT < 0.5 at p3", lambda r: r["IoGT_p3"] is not None and r["IoGT_p3"] < 0.5),
    "r2sm": ("amodal query answered with the modal mask",
             lambda r: any(q["requested"] == "amodal" and q["wrong_type"] for q in r["queries"])),
    "hallusegbench": ("hallucinated c on I' (CMS_counterfact > 0.8)",
                      lambda r: r["CMS_counterfact"] is not None and r["CMS_counterfact"] > 0.8),
}


@pytest.mark.parametrize("kind", sorted(PRESET_CHECKS))
def test_benchmark_language_filters_match_the_readouts(window, kind):
    if kind not in demo.demo_kinds():
        pytest.skip(f"no {kind} demo")
    assert window.commands.open_demo(kind, sync=True)
    label, check = PRESET_CHECKS[kind]
    combo = window.browser.presets
    idx = combo.findText(label)
    assert idx >= 0, [combo.itemText(i) for i in range(combo.count())]
    combo.setCurrentIndex(idx)
    rows = window.state.readouts[window.state.active]
    expected = sum(map(check, rows))
    assert 0 < expected < len(rows)  # the demo has both kinds of sample
    assert window.browser.proxy.rowCount() == expected


def test_screenshot_options_select_filter_sample_and_typed_prompts(tmp_path, qtbot):
    from masklens.core.cli import main

    out = tmp_path / "cmp.png"
    argv = ["gui", "--demo", "--kind", "cafe", "--sample", "#3", "--prompt", "negative=tiger",
            "--prompt", "positive=triangle", "--compare", "--screenshot", str(out), "--size", "1400x900"]
    assert main(argv) == 0
    img = QImage(str(out))
    assert (img.width(), img.height()) == (1400, 900)


@pytest.mark.parametrize(("extra", "message"), [
    (["--size", "800x600"], "at least 1400x900"),
    (["--sample", "nope"], "no sample 'nope'"),
    (["--filter", "no such preset"], "no filter preset"),
    (["--prompt", "sideways=zebra"], "unknown role 'sideways'"),
    (["--prompt", "zebra"], "ROLE[:LEVEL]=TEXT"),
])
def test_screenshot_option_errors_are_one_line(tmp_path, capsys, extra, message):
    from masklens.core.cli import main

    rc = main(["gui", "--demo", "--kind", "cafe", "--screenshot", str(tmp_path / "x.png"), *extra])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err


def test_several_prediction_files_become_several_layers(toy_window, qtbot, tmp_path):
    from masklens.gui.dialogs.open_dialog import OpenDialog

    w = toy_window
    files = []
    for name, score in (("a.json", 0.99), ("b.json", 0.1)):
        p = tmp_path / name
        p.write_text(json.dumps([{"sample": "s0", "prompt": 0, "box": [8, 8, 28, 28], "score": score}]))
        files.append(str(p))
    dlg = OpenDialog(w, kind="toy", predictions_only=True)
    qtbot.addWidget(dlg)
    dlg.set_value("pred", ";".join(files))
    assert dlg.prediction_argvs() == [["--pred", files[0]], ["--pred", files[1]]]
    assert w.commands.open_prediction_files(dlg.prediction_argvs())
    qtbot.waitUntil(lambda: {"a.json", "b.json"} <= set(w.state.prediction_sets), timeout=10000)
    hits = {}
    for name in ("a.json", "b.json"):
        w.state.set_active(name)
        hits[name] = w.state.readout(0)["positive"]["hit"]
    assert hits == {"a.json": True, "b.json": False}  # 0.99 ≥ t, 0.1 < t


def test_hallusegbench_typed_prompt_on_the_chosen_image(window, qtbot):
    if "hallusegbench" not in demo.demo_kinds():
        pytest.skip("no hallusegbench demo")
    from masklens.core.scoring.readout import make_typed_prompt

    assert window.commands.open_demo("hallusegbench", sync=True)
    sample = window.state.sample
    pb = window.prompt_bar
    assert pb.image.count() == 2  # factual, counterfactual
    for p in sample.prompts:  # each of the four queries: same image, same role → same ground truth
        typed = make_typed_prompt(sample, "anything", p.role, image=p.image)
        assert (typed.image, typed.gt) == (p.image, p.gt)
    neg_cf = next(p for p in sample.prompts if p.role.value == "negative" and p.image == "counterfactual")
    pb.set_role("negative")
    pb.image.setCurrentIndex(pb.image.findData("counterfactual"))
    assert pb.text.currentText() == neg_cf.text  # pre-filled with that query
    pb.select_model("demo")
    pb.request_run()
    qtbot.waitUntil(lambda: bool(window.state.live) and not window.jobs.busy, timeout=30000)
    r = window.state.live[-1]
    assert r.replaced == neg_cf.id and r.prompt.gt == neg_cf.gt


@pytest.mark.parametrize("kind", ["cafe", "pcs", "hallusegbench", "cgebench", "r2sm", "ovs"])
def test_every_role_of_every_demo_kind_runs_live(window, kind):
    """Each role a demo sample has, typed and run on the demo model: a result with both readouts."""
    if kind not in demo.demo_kinds():
        pytest.skip(f"no {kind} demo")
    from masklens.core.scoring.readout import benchmark_readout
    from masklens.gui.prompts.prompt_bar import PromptRequest

    assert window.commands.open_demo(kind, sync=True)
    s = window.state
    seen = set()
    for p in s.sample.prompts:
        if (p.role, p.level, p.image) in seen:
            continue
        seen.add((p.role, p.level, p.image))
        n = len(s.live)
        image = p.image if len(s.sample.images) > 1 else None
        assert window.commands.run_prompt(PromptRequest(p.text, p.role, p.level, image, "demo"), sync=True), \
            window.message_bar.text
        r = s.live[n]
        assert r.prompt.gt is not None and r.generic["gt"] == r.prompt.gt
        assert r.replaced is not None  # the sample has a prompt of this role: benchmark readout too
        assert r.benchmark == benchmark_readout(s.kind, s.sample, r.prompt, r.prediction, s.params,
                                                s.predictions())
        if kind in ("cafe", "hallusegbench"):  # the demo's prediction files are the demo model's answers
            assert r.benchmark == s.readout(), "live demo model and the demo's prediction file disagree"
    assert window.message_bar.level != "error"


def test_choose_which_query_a_typed_prompt_replaces(window, qtbot):
    if "r2sm" not in demo.demo_kinds():
        pytest.skip("no r2sm demo")
    assert window.commands.open_demo("r2sm", sync=True)
    s, pb = window.state, window.prompt_bar
    modal = [p for p in s.sample.prompts if p.role.value == "modal"]
    if len(modal) < 2:
        pytest.skip("the first R2SM demo sample has one modal query")
    pb.set_role("modal")
    assert pb.target.count() == len(modal)
    assert pb.set_target(modal[1].id) and pb.text.currentText() == modal[1].text
    pb.set_text("only the part you can see")
    pb.select_model("demo")
    req = pb.request()
    assert req.replaces == modal[1].id
    assert window.commands.run_prompt(req, sync=True)
    r = s.live[-1]
    assert r.replaced == modal[1].id and r.prompt.gt == modal[1].gt


def test_out_of_range_remembered_thresholds_fall_back_to_defaults(qtbot, toy):
    from masklens.gui.window.main_window import MainWindow

    s = Settings()
    s.params["toy"] = {"score_threshold": 7.0}  # e.g. written by an older version
    w = MainWindow(s, persist=False)
    qtbot.addWidget(w)
    assert w.commands.open_benchmark("toy", ["--ann", str(toy["ann"]), "--pred", str(toy["pred"])], sync=True)
    assert w.state.benchmark is not None and w.state.params["score_threshold"] == 0.5


def test_screenshot_with_a_kind_but_no_demo_flag_does_not_wait_for_a_dialog(tmp_path, qtbot):
    from masklens.core.cli import main

    out = tmp_path / "k.png"
    assert main(["gui", "--kind", "cgebench", "--screenshot", str(out)]) == 0 and out.exists()


def test_slider_rederives_the_shown_set_and_the_others_when_they_become_active(toy_window, qtbot, tmp_path):
    w = toy_window
    files = []
    for name, score in (("a.json", 0.7), ("b.json", 0.3)):
        p = tmp_path / name
        p.write_text(json.dumps([{"sample": "s0", "prompt": 0, "box": [8, 8, 28, 28], "score": score}]))
        files.append(str(p))
    assert w.commands.open_prediction_files([["--pred", f] for f in files])
    qtbot.waitUntil(lambda: {"a.json", "b.json"} <= set(w.state.prediction_sets), timeout=10000)
    w.state.set_active("a.json")
    w.state.set_params({**w.state.params, "score_threshold": 0.2})
    assert set(w.state.readouts) == {"a.json"}  # only the shown set is re-derived per slider move
    w.state.set_active("b.json")
    assert w.state.readouts["b.json"] == w.state.scorers["b.json"].readouts(w.state.params)
    assert w.state.readout(0)["positive"]["hit"] is True  # 0.3 ≥ t = 0.2 (it missed at t = 0.5)


def test_replaced_panels_are_hidden_at_once(qtbot):
    """A new grid (e.g. the Compare tab going from one panel to two) hides the old panels before
    deleteLater runs; otherwise an offscreen grab shows them through the grid's spacing."""
    from masklens.gui.canvas.sample_view import SampleViewWidget

    view = SampleViewWidget()
    qtbot.addWidget(view)
    view.resize(800, 400)
    view.show()
    view._ensure(1, 1)
    old = view.panels[0]
    qtbot.waitUntil(old.isVisible, timeout=2000)
    view._ensure(2, 2)
    assert old not in view.panels and not old.isVisible()
    qtbot.waitUntil(lambda: all(p.isVisible() for p in view.panels), timeout=2000)


def test_opacity_change_reuses_label_maps_and_new_masks_rebuild_them(qtbot):
    from masklens.gui.canvas.image_canvas import Canvas
    from masklens.gui.canvas.sample_view import LayerToggles, build_layers

    canvas = Canvas()
    qtbot.addWidget(canvas)
    gt = np.zeros((40, 40), bool)
    gt[5:20, 5:20] = True
    pred = np.zeros((40, 40), bool)
    pred[10:30, 10:30] = True
    tg = LayerToggles()
    assert build_layers(canvas, [gt], [pred], tg) == ["pred", "gt"]
    first = {k: v[2] for k, v in canvas.label_memo.items()}
    before = canvas._layers["gt"].pixmap().toImage().pixelColor(7, 7).alpha()  # (2, 2) inside the box
    tg.gt_opacity = 0.9
    build_layers(canvas, [gt], [pred], tg)
    assert all(canvas.label_memo[k][2] is first[k] for k in first)  # same label maps
    assert canvas._layers["gt"].pixmap().toImage().pixelColor(7, 7).alpha() > before  # new table
    other = pred.copy()
    build_layers(canvas, [gt], [other], tg)  # another mask array: rebuilt
    assert canvas.label_memo["pred"][2] is not first["pred"]
    tg.outlines = False
    build_layers(canvas, [gt], [other], tg)
    assert canvas.label_memo["gt"][2] is not first["gt"] and 2 not in canvas.label_memo["gt"][2]
