"""``IouJobs`` with part of its blocks computed in a worker process (a fresh Python, real
pycocotools) gives the in-process values bit for bit: jobs of several sizes, empty jobs, blocks
of one ground truth per job, jobs of mixed sizes (each its own ``iou_matrix``). A worker that
fails — a Python that cannot start, a worker killed before its input is sent, one that is never
sent anything — leaves its blocks to this process: the same values, no exception, and no child
process left behind (each worker is waited for)."""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pycocotools import mask as mask_utils

import masklens.core.scoring.iou_batch as iou_batch
from masklens.core.kinds.demo import demo_files
from masklens.core.kinds.pcs.kind import KIND
from masklens.core.masks import Mask, iou_matrix
from masklens.core.runtime.worker_processes import workers_available
from masklens.core.scoring.iou_batch import IouJobs

pytestmark = pytest.mark.skipif(
    not workers_available() or not Path("/proc/self/task").is_dir(),
    reason="worker processes need a second CPU and a Python; the child check reads /proc",
)


def children() -> set[int]:
    """This process' child processes, zombies included (a zombie is a child not waited for)."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            found.update(int(pid) for pid in (task / "children").read_text().split())
        except FileNotFoundError:  # a thread that has just ended
            continue
    return found


@pytest.fixture
def no_child_left() -> Iterator[None]:
    before = children()
    yield
    assert children() <= before


@pytest.fixture
def iou_calls(monkeypatch) -> list[int]:
    """The number of pycocotools ``iou`` calls made in this process (the real function)."""
    calls: list[int] = []
    real = mask_utils.iou

    def counted(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(mask_utils, "iou", counted)
    return calls


@st.composite
def mask_of(draw, h: int, w: int) -> Mask:
    kind = draw(st.sampled_from(["random", "random", "empty", "full"]))
    if kind == "empty":
        return Mask.from_array(np.zeros((h, w), bool))
    if kind == "full":
        return Mask.from_array(np.ones((h, w), bool))
    bits = draw(st.lists(st.booleans(), min_size=h * w, max_size=h * w))
    return Mask.from_array(np.array(bits, bool).reshape(h, w))


@st.composite
def job(draw, one_gt: bool):
    h, w = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    preds = draw(st.lists(mask_of(h, w), max_size=4))
    gts = draw(st.lists(mask_of(h, w), min_size=1 if one_gt else 0, max_size=1 if one_gt else 3))
    if preds and gts and draw(st.integers(0, 9)) == 0:  # a ground truth of another size
        gts[-1] = draw(mask_of(h + 1, w))
    return preds, gts


def computed(jobs, workers: bool) -> np.ndarray:
    batch = IouJobs(workers=workers)
    for preds, gts in jobs:
        batch.add_masks(preds, gts)
    batch.run()
    assert batch.array is None or batch.values == batch.array.tolist()
    return np.asarray(batch.values, dtype=np.float64)


def blocks_of(jobs) -> int:
    """The pycocotools calls of the blocks (jobs of one size with predictions and ground truths)."""
    n = sum(1 for p, g in jobs if p and g and all(m.rle["size"] == g[0].rle["size"] for m in (*p, *g)))
    return -(-n // iou_batch.BLOCK)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.booleans().flatmap(lambda one_gt: st.lists(job(one_gt), min_size=2, max_size=14)), st.integers(1, 4))
def test_values_with_a_worker_equal_the_values_here_bit_for_bit(monkeypatch, jobs, block) -> None:
    monkeypatch.setattr(iou_batch, "BLOCK", block)
    before = children()
    here = computed(jobs, workers=False)
    assert here.tobytes() == np.concatenate([np.zeros(0), *(iou_matrix(p, g).ravel() for p, g in jobs)]).tobytes()
    assert computed(jobs, workers=True).tobytes() == here.tobytes()
    assert children() <= before


def many_jobs(n: int, size: int = 24) -> list[tuple[list[Mask], list[Mask]]]:
    """``n`` jobs of real overlaps, their RLE counts ``size`` px square (longer counts for more)."""
    rng = np.random.default_rng(7)
    out = []
    for _ in range(n):
        masks = [Mask.from_array(rng.random((size, size)) < 0.5) for _ in range(4)]
        out.append((masks[:2], masks[2:]))
    return out


def test_the_worker_computes_its_share_of_the_blocks(iou_calls, no_child_left) -> None:
    jobs = many_jobs(64)
    here = computed(jobs, workers=False)
    assert len(iou_calls) == blocks_of(jobs) == 4
    iou_calls.clear()
    assert computed(jobs, workers=True).tobytes() == here.tobytes()
    assert len(iou_calls) < 4  # the rest came from the worker


@pytest.mark.parametrize("size", [8, 160])  # its input fits in the pipe, or the pipe breaks
def test_a_python_that_cannot_start_leaves_its_blocks_here(monkeypatch, iou_calls, no_child_left, size) -> None:
    jobs = many_jobs(48, size)
    here = computed(jobs, workers=False)
    iou_calls.clear()
    monkeypatch.setenv("PYTHONHOME", os.fspath(Path(sys.executable).parent / "no-such-home"))
    assert computed(jobs, workers=True).tobytes() == here.tobytes()
    assert len(iou_calls) == blocks_of(jobs)  # every block here


def test_a_worker_killed_before_its_input_is_sent_leaves_its_blocks_here(iou_calls, no_child_left) -> None:
    jobs = many_jobs(48, 160)
    here = computed(jobs, workers=False)
    iou_calls.clear()
    before = children()
    batch = IouJobs(workers=True)
    (worker,) = children() - before
    os.kill(worker, signal.SIGKILL)
    for preds, gts in jobs:
        batch.add_masks(preds, gts)
    batch.run()
    assert batch.array is not None and batch.array.tobytes() == here.tobytes()
    assert len(iou_calls) == blocks_of(jobs)


def test_a_worker_never_sent_anything_ends_with_its_jobs(no_child_left) -> None:
    batch = IouJobs(workers=True)
    batch.add_masks(*many_jobs(1)[0])
    del batch
    gc.collect()


def test_small_batches_are_computed_here(iou_calls, no_child_left) -> None:
    before = children()
    batch = IouJobs(expected=iou_batch.PARALLEL_JOBS - 1)
    assert children() == before
    for preds, gts in many_jobs(64):
        batch.add_masks(preds, gts)
    batch.run()
    assert len(iou_calls) == 4


def test_pcs_overlaps_of_a_large_batch_equal_those_computed_here(monkeypatch, iou_calls, no_child_left) -> None:
    """``all_overlaps`` gives a batch of at least ``PARALLEL_JOBS`` entries a worker."""
    files = demo_files("pcs")
    bench = KIND.load_benchmark(gt=files["gt"], images=files["images"])
    preds = KIND.load_predictions(bench, pred=files["pred"])

    def overlaps() -> list[tuple]:
        return [(o.scores, o.best_ious, o.missing, o.exhaustive, o.ordered_scores, o.ious.shape, o.ious.tobytes(),
                 o.ngt) for o in KIND.all_overlaps(bench.samples, preds)]  # fmt: skip

    here = overlaps()
    calls_here = len(iou_calls)
    monkeypatch.setattr(iou_batch, "PARALLEL_JOBS", len(bench.samples))
    iou_calls.clear()
    assert overlaps() == here
    assert 0 < len(iou_calls) < calls_here


def test_a_cancel_while_the_jobs_are_added_ends_the_worker_at_once(monkeypatch, no_child_left) -> None:
    """``all_overlaps`` cancelled by its progress (as the window's Cancel does) ends its worker
    before the cancel reaches the caller."""
    files = demo_files("pcs")
    bench = KIND.load_benchmark(gt=files["gt"], images=files["images"])
    preds = KIND.load_predictions(bench, pred=files["pred"])
    monkeypatch.setattr(iou_batch, "PARALLEL_JOBS", 1)
    before = children()
    started: list[set[int]] = []

    class Cancelled(Exception):
        pass

    def cancel(done: int) -> None:
        started.append(children() - before)
        raise Cancelled

    with pytest.raises(Cancelled):
        KIND.all_overlaps(bench.samples, preds, cancel)
    assert started and started[0]  # the worker was running when the cancel came
    assert children() <= before
