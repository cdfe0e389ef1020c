"""Opening a benchmark with its prediction file: the file is read ahead (in a worker process)
while the benchmark loads, and the window shows the readouts it shows reading it afterwards;
an open that fails or is cancelled leaves no worker behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from child_processes import HAS_PROC, children_running, open_files_named
from test_records_gui import pcs_files

from masklens.core import api
from masklens.core.kinds.common.cgf1 import results_ahead
from masklens.core.runtime.worker_processes import workers_available
from masklens.core.scoring.contract import Scorer, get_kind
from masklens.core.scoring.kind_args import kind_files
from masklens.gui.dialogs.open_dialog import parse_kind_args

pytestmark = pytest.mark.skipif(not workers_available() or not HAS_PROC,
                                reason="worker processes need a second CPU and a Python; counted in /proc")


def nothing_left() -> bool:
    return not children_running(results_ahead.__name__) and not open_files_named("masklens-results-")


@pytest.fixture
def pcs_read_ahead(tmp_path, monkeypatch) -> list[str]:
    """A small SA-Co/Gold set whose results file the window reads ahead (any size is, here)."""
    monkeypatch.setattr(results_ahead, "READ_AHEAD_BYTES", 0)
    argv = pcs_files(tmp_path, 60)
    kind = get_kind("pcs")
    ahead = kind.read_predictions_ahead(**kind_files(kind, parse_kind_args(kind, argv)))
    assert ahead is not None
    ahead.close()
    return argv


def test_the_window_shows_the_readouts_of_predictions_read_ahead(window, qtbot, pcs_read_ahead) -> None:
    w = window
    assert w.commands.open_benchmark("pcs", pcs_read_ahead)
    qtbot.waitUntil(lambda: bool(w.state.readouts) and not w.jobs.busy, timeout=30000)
    kind = get_kind("pcs")
    files = kind_files(kind, parse_kind_args(kind, pcs_read_ahead))
    bench = api.load_benchmark(kind, **files)
    want = Scorer(kind, bench, kind.load_predictions(bench, **files)).readouts(w.state.params)
    assert list(w.state.readouts[w.state.active]) == list(want)
    assert w.browser.model.rowCount() == 60
    assert nothing_left()


def test_an_open_that_fails_leaves_no_worker(window, qtbot, pcs_read_ahead) -> None:
    w = window
    gt1 = Path(pcs_read_ahead[3])
    broken = json.loads(gt1.read_text())
    broken["images"][0]["height"] = "tall"
    gt1.write_text(json.dumps(broken))
    problems: list[str] = []
    assert w.commands.open_benchmark("pcs", pcs_read_ahead, on_error=problems.append)
    qtbot.waitUntil(lambda: bool(problems) and not w.jobs.busy, timeout=30000)
    assert str(gt1) in problems[0] and "height" in problems[0]
    assert w.state.benchmark is None and nothing_left()


def test_an_open_cancelled_leaves_no_worker(window, qtbot, pcs_read_ahead) -> None:
    w = window
    cancelled: list[str] = []
    w.jobs.cancelled.connect(cancelled.append)
    assert w.commands.open_benchmark("pcs", pcs_read_ahead)
    w.jobs.cancel_all()
    qtbot.waitUntil(lambda: bool(cancelled) and not w.jobs.busy, timeout=30000)
    assert cancelled == ["open benchmark"] and w.state.benchmark is None and nothing_left()
