"""Evaluate and report dialogs driven offscreen on a real AppState (toy kind, real segmenter)."""

import json

import pytest

pytest.importorskip("pytestqt")

from masklens.core.scoring.contract import Scorer  # noqa: E402
from masklens.gui.state import AppState  # noqa: E402

from .toykind import BrightSegmenter, install, install_backend, load_toy_predictions, write_fixture  # noqa: E402


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("MASKLENS_CACHE_DIR", str(tmp_path / "cache"))
    kind = install()
    install_backend()
    files = write_fixture(tmp_path)
    bench = kind.load_benchmark(ann=str(files["ann"]))
    st = AppState()
    st.set_benchmark(kind, bench, None)
    st.set_model("bright")
    ps = load_toy_predictions(files["pred_a"])
    st.add_predictions("A", ps, Scorer(kind, bench, ps))
    return st


def test_evaluate_dialog_runs_and_attaches(qtbot, state, tmp_path):
    from masklens.gui.dialogs.evaluate_dialog import open_evaluate_dialog

    BrightSegmenter.calls = 0
    dlg = open_evaluate_dialog(None, state)
    qtbot.addWidget(dlg)
    assert dlg.rows[0].spec().name == "bright"
    dlg.out.setText(str(tmp_path / "ev"))
    dlg.start()
    qtbot.waitUntil(lambda: dlg.job is None, timeout=20000)
    assert "8 computed" in dlg.status.text(), dlg.status.text()
    assert "bright" in state.scorers  # the scored run is attached to the window
    assert json.loads((tmp_path / "ev" / "summary.json").read_text())["samples"] == 4
    # a subset by group, answered from the cache
    dlg.scope.setCurrentIndex(dlg.scope.findData("group:B"))
    dlg.start()
    qtbot.waitUntil(lambda: dlg.job is None, timeout=20000)
    assert BrightSegmenter.calls == 4 * 2 and "4 from the cache" in dlg.status.text()
    dlg.scope.setCurrentIndex(dlg.scope.findData("ids"))
    dlg.ids.setText("nope")
    dlg.start()
    assert "unknown sample id" in dlg.status.text()


def test_report_dialog_exports_and_cancel_leaves_nothing(qtbot, state, tmp_path):
    from masklens.gui.dialogs.report_dialog import open_report_dialog

    dlg = open_report_dialog(None, state)
    qtbot.addWidget(dlg)
    out = tmp_path / "rep"
    dlg.out.setText(str(out))
    dlg.start()
    qtbot.waitUntil(lambda: dlg.job is None, timeout=30000)
    assert (out / "report.html").is_file(), dlg.status.text()
    assert dlg.open_button.isEnabled()
    # cancel right away: the worker stops at its first progress report, nothing is written
    out2 = tmp_path / "rep2"
    dlg.out.setText(str(out2))
    dlg.start()
    dlg.cancel_or_close()
    qtbot.waitUntil(lambda: dlg.job is None, timeout=30000)
    assert not out2.exists()
    assert "cancelled" in dlg.status.text()


def test_dialogs_refuse_without_benchmark(qtbot):
    from masklens.core.errors import MasklensError
    from masklens.gui.dialogs.report_dialog import open_report_dialog

    with pytest.raises(MasklensError, match="open a benchmark"):
        open_report_dialog(None, AppState())


def test_report_dialog_never_defaults_into_the_package():
    from masklens.core.kinds.demo import demo_namespace
    from masklens.core.scoring.contract import get_kind
    from masklens.gui.dialogs.report_dialog import default_report_dir
    from masklens.resources import DEMO_DIR

    bench = get_kind("cafe").load_benchmark(**vars(demo_namespace("cafe")))
    d = default_report_dir(bench)
    assert not d.resolve().is_relative_to(DEMO_DIR.resolve().parent)


def test_report_progress_moves_with_the_work(state, tmp_path):
    """Progress never sits at 0 % "layout": many steps, in order, each stage named."""
    from masklens.core.reports import ReportOptions, build_report
    from masklens.core.reports.runs import ModelRun, run_provenance

    name = next(iter(state.scorers))
    run = ModelRun(name, state.prediction_sets[name], state.scorers[name],
                   state.scorers[name].rescore(state.params), run_provenance(state.prediction_sets[name]))
    seen = []
    build_report(state.kind, state.benchmark, [run], tmp_path / "r", params=state.params,
                 options=ReportOptions(sweep=True), progress=lambda st, d, n: seen.append((st, d, n)))
    done = [d for _, d, _ in seen]
    assert done == sorted(done) and done[0] == 0 and done[-1] == seen[-1][2] == 100
    assert len(set(done)) >= 10  # the bar moves through the work, not in five jumps
    stages = [st for st, _, _ in seen]
    assert {"charts", "sweep", "gallery", "writing"} <= set(stages)
    assert "layout" not in stages
