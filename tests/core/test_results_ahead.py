"""Prediction files read ahead (a worker process reads a large COCO results file while the
benchmark loads): the same scores as reading them after it, and no worker left behind by a
handle closed unused, dropped, or by a load that fails."""

from __future__ import annotations

import gc
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from child_processes import HAS_PROC, children_running, open_files_named

import masklens.core as ml
from masklens.core.errors import MasklensError
from masklens.core.kinds.common.cgf1 import results_ahead
from masklens.core.kinds.common.cgf1.results_ahead import ResultsAhead
from masklens.core.runtime.worker_processes import workers_available
from masklens.core.scoring.contract import get_kind

pytestmark = pytest.mark.skipif(not workers_available() or not HAS_PROC,
                                reason="worker processes need a second CPU and a Python; counted in /proc")

ROOT = Path(__file__).resolve().parents[2]
D = ROOT / "resources" / "demo"
FILES = {
    "pcs": {"gt": [str(D / "pcs" / f"gold_annotator_{i}.json") for i in (1, 2, 3)], "pred": str(D / "pcs" / "pred_demo.json")},
    "cafe": {"ann": str(D / "cafe" / "ann.json"), "pred": str(D / "cafe" / "pred_demo.json")},
}  # fmt: skip


def readers_ahead() -> list[int]:
    return children_running(results_ahead.__name__)


def answer_files() -> list[str]:
    """The open files of this process that hold a worker's answer."""
    return open_files_named("masklens-results-")


@pytest.fixture
def always_ahead(monkeypatch):
    """Every results file is read ahead, however small (the demo's are a few kB)."""
    monkeypatch.setattr(results_ahead, "READ_AHEAD_BYTES", 0)


def test_a_handle_closed_unused_leaves_no_worker(tmp_path) -> None:
    ahead = ResultsAhead(FILES["pcs"]["pred"])
    assert readers_ahead() == [ahead.pid]
    ahead.close()
    assert readers_ahead() == [] and answer_files() == []
    assert not Path(f"/proc/{ahead.pid}").exists()  # ended and reaped
    ahead.close()  # a second close does nothing
    assert ahead.digest() is None


def test_a_handle_dropped_unused_leaves_no_worker() -> None:
    ahead = ResultsAhead(FILES["pcs"]["pred"])
    pid = ahead.pid
    del ahead
    gc.collect()
    assert readers_ahead() == [] and answer_files() == []
    assert not Path(f"/proc/{pid}").exists()


@pytest.mark.parametrize("kind", ["pcs", "cafe"])
def test_scores_read_ahead_equal_those_read_after_the_benchmark(kind, monkeypatch) -> None:
    plain = ml.score(kind, **FILES[kind]).to_json()
    monkeypatch.setattr(results_ahead, "READ_AHEAD_BYTES", 0)
    assert get_kind(kind).read_predictions_ahead(**FILES[kind]) is not None
    assert readers_ahead() == []  # the handle above, dropped: ended
    assert ml.score(kind, **FILES[kind]).to_json() == plain
    assert readers_ahead() == [] and answer_files() == []


def test_small_files_and_missing_ones_are_read_in_this_process() -> None:
    assert get_kind("pcs").read_predictions_ahead(**FILES["pcs"]) is None  # a few kB
    assert get_kind("pcs").read_predictions_ahead(gt=FILES["pcs"]["gt"], pred="hf://datasets/a/b/pred.json") is None
    assert get_kind("pcs").read_predictions_ahead(gt=FILES["pcs"]["gt"]) is None


def test_a_value_that_is_no_path_is_left_to_the_load(always_ahead) -> None:
    assert get_kind("pcs").read_predictions_ahead(gt=FILES["pcs"]["gt"], pred=0) is None  # not file descriptor 0


def test_without_a_temporary_folder_the_file_is_read_in_this_process(tmp_path, monkeypatch, always_ahead) -> None:
    plain = ml.score("cafe", **FILES["cafe"]).to_json()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "gone"))
    assert get_kind("cafe").read_predictions_ahead(**FILES["cafe"]) is None
    assert ml.score("cafe", **FILES["cafe"]).to_json() == plain


def test_a_benchmark_that_fails_to_load_ends_the_worker(tmp_path, always_ahead) -> None:
    gt = [str(shutil.copy(p, tmp_path)) for p in FILES["pcs"]["gt"]]
    Path(gt[1]).write_text(json.dumps({"images": [{"id": 1}], "annotations": []}))  # no size
    get_kind("pcs").read_predictions_ahead(gt=gt, pred=FILES["pcs"]["pred"]).close()  # it is read ahead
    with pytest.raises(MasklensError) as failed:
        ml.score("pcs", gt=gt, pred=FILES["pcs"]["pred"])
    assert failed.traceback  # its frames (the handle among them) are still held: ended all the same
    assert readers_ahead() == [] and answer_files() == []
