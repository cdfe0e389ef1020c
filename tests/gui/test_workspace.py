"""A masklens workspace file: File › Save workspace… writes the benchmark's kind and inputs, its
prediction sets and its review store, and `masklens gui FILE` (a double click, through the
desktop entry) opens them again."""

from __future__ import annotations

import json

import pytest

from masklens.core.cli import main
from masklens.core.errors import DataFormatError
from masklens.core.files.workspace import read_workspace
from masklens.core.kinds.demo import demo_files
from masklens.gui.window.main_window import MainWindow
from masklens.gui.window.workspace import open_workspace, save_workspace


def _window(qtbot) -> MainWindow:
    w = MainWindow()
    qtbot.addWidget(w)
    return w


def test_a_saved_workspace_opens_the_same_benchmark_sets_and_store(qtbot, tmp_path):
    first = _window(qtbot)
    assert first.commands.open_demo("cafe", sync=True)
    pred = str(demo_files("cafe")["pred"])
    assert first.commands.open_predictions(["--pred", pred], "again", sync=True)
    written = save_workspace(first.state, tmp_path / "mine")
    assert written == tmp_path / "mine.masklens"
    data = json.loads(written.read_text())
    assert data["kind"] == "cafe" and "--ann" in data["inputs"] and "--pred" not in data["inputs"]
    assert [s["name"] for s in data["prediction_sets"]] == ["demo predictions", "again"]
    assert data["store"] == str(first.state.review_store.path)

    second = _window(qtbot)
    assert open_workspace(second.state, second.commands, written, sync=True)
    assert second.state.kind.name == "cafe"
    assert second.state.benchmark.name == first.state.benchmark.name
    assert list(second.state.prediction_sets) == ["demo predictions", "again"]
    assert second.state.review_store.path == first.state.review_store.path


def _workspace_with_a_second_set(tmp_path):
    ws = tmp_path / "cafe.masklens"
    files = demo_files("cafe")
    ws.write_text(json.dumps({"masklens_workspace": 1, "kind": "cafe", "inputs": ["--ann", str(files["ann"])],
                              "prediction_sets": [{"name": "workspace set", "argv": ["--pred", str(files["pred"])]}],
                              "store": None}))
    return ws


def test_a_cancelled_workspace_attaches_no_sets_to_the_next_benchmark(qtbot, tmp_path):
    w = _window(qtbot)
    with qtbot.waitSignal(w.commands.jobs.cancelled, timeout=20000):
        assert open_workspace(w.state, w.commands, _workspace_with_a_second_set(tmp_path))
        w.commands.jobs.cancel_all()  # the load is cancelled: its benchmark never shows
    qtbot.waitUntil(lambda: not w.commands.jobs.busy, timeout=20000)
    assert w.state.benchmark is None
    assert w.commands.open_demo("cafe", sync=True)
    qtbot.waitUntil(lambda: not w.commands.jobs.busy, timeout=20000)  # a set attached would be read by now
    assert w.state.benchmark is not None and list(w.state.prediction_sets) == ["demo predictions"]


def test_a_workspace_whose_opening_was_refused_attaches_no_sets_to_the_next_benchmark(qtbot, tmp_path):
    w = _window(qtbot)
    leaving = []
    w.state.add_leave_check(lambda what: bool(leaving))  # e.g. an unaccepted edit the user keeps
    assert not open_workspace(w.state, w.commands, _workspace_with_a_second_set(tmp_path), sync=True)
    leaving.append("now allowed")
    assert w.commands.open_demo("cafe", sync=True)
    assert w.state.benchmark is not None and list(w.state.prediction_sets) == ["demo predictions"]


def test_save_workspace_is_in_the_file_menu(qtbot):
    w = _window(qtbot)
    file_menu = w.menuBar().actions()[0].menu()
    assert "Save &workspace…" in [a.text() for a in file_menu.actions()]


def test_gui_file_opens_the_workspace(tmp_path):
    shot = tmp_path / "shot.png"
    files = demo_files("r2sm")
    ws = tmp_path / "r2sm.masklens"
    ws.write_text(json.dumps({"masklens_workspace": 1, "kind": "r2sm",
                              "inputs": ["--ann", str(files["ann"])],
                              "prediction_sets": [{"name": "p", "argv": ["--pred", str(files["pred"])]}],
                              "store": None}))
    assert main(["gui", str(ws), "--screenshot", str(shot)]) == 0
    assert shot.stat().st_size > 0


def test_relative_paths_are_read_against_the_workspace_folder(tmp_path):
    (tmp_path / "ann.json").write_text("{}")
    ws = tmp_path / "w.masklens"
    ws.write_text(json.dumps({"masklens_workspace": 1, "kind": "r2sm", "inputs": ["--ann", "ann.json"],
                              "prediction_sets": [], "store": "reviews.sqlite"}))
    read = read_workspace(ws)
    assert read.inputs == ["--ann", str(tmp_path / "ann.json")]
    assert read.store == str(tmp_path / "reviews.sqlite")


@pytest.mark.parametrize(("content", "said"), [
    ({"kind": "cafe"}, "not a masklens workspace"),
    ({"masklens_workspace": 1, "kind": "cafe", "inputs": "ann.json"}, "field 'inputs': must be a list of strings"),
    ({"masklens_workspace": 1, "kind": "", "inputs": []}, "field 'kind'"),
])
def test_a_file_that_is_no_workspace_is_one_line_naming_file_and_field(tmp_path, capsys, content, said):
    bad = tmp_path / "bad.masklens"
    bad.write_text(json.dumps(content))
    with pytest.raises(DataFormatError, match=said):
        read_workspace(bad)
    assert main(["gui", str(bad)]) != 0
    err = capsys.readouterr().err
    assert str(bad) in err and said in err and "Traceback" not in err
