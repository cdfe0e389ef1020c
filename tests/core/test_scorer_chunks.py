"""The Scorer's stage 1 with progress (what the window and a progress bar get) equals one bulk
call, for every demo kind; progress grows to the last sample, and raising from it cancels."""

from __future__ import annotations

import pytest
from test_api import CASES  # same folder (pytest puts it on sys.path)

import masklens.core as ml
from masklens.core.scoring import contract as scoring
from masklens.core.scoring.contract import Scorer, get_kind, overlap_chunks


@pytest.mark.parametrize(("n", "size"), [(0, 4), (1, 4), (2, 2), (5, 2), (9, 4), (8, 4), (3, 512), (3, 1)])
def test_overlap_chunks_cover_every_sample_once_without_a_lone_tail(n, size):
    runs = overlap_chunks(n, size)
    assert [i for a, b in runs for i in range(a, b)] == list(range(n))
    assert all(b - a >= 2 for a, b in runs) or n == 1 or size == 1
    assert all(b - a <= size + 1 for a, b in runs)


def test_a_kind_without_a_bulk_stage_reports_progress_per_sample():
    files, _, _ = CASES["r2sm"]
    bench = ml.load_benchmark("r2sm", **files)
    seen: list[int] = []
    Scorer(get_kind("r2sm"), bench, ml.load_predictions("r2sm", bench, **files), progress=lambda i, n: seen.append(i))
    assert seen == list(range(1, len(bench.samples) + 1))


@pytest.mark.parametrize("name", sorted(CASES))
def test_chunked_stage_one_equals_one_bulk_call(name, monkeypatch):
    files, _, (param, _, value) = CASES[name]
    kind = get_kind(name)
    bench = ml.load_benchmark(name, **files)
    preds = ml.load_predictions(name, bench, **files)
    whole = Scorer(kind, bench, preds)
    monkeypatch.setattr(scoring, "OVERLAP_CHUNK", 2)  # many runs, as at 100k samples in the window
    seen: list[tuple[int, int]] = []
    chunked = Scorer(kind, bench, preds, progress=lambda i, n: seen.append((i, n)))
    n = len(bench.samples)
    assert seen and seen[-1] == (n, n) and all(total == n for _, total in seen)
    assert [i for i, _ in seen] == sorted(i for i, _ in seen)  # samples done only grow
    if name == "cafe":  # a bulk stage in runs (masklens.core.scoring.contract.in_runs)
        assert len(seen) == len(overlap_chunks(n, 2))
    for params in ({}, {param: value}):
        a, b = whole.rescore(params), chunked.rescore(params)
        assert a.summary == b.summary
        assert a.samples == b.samples


class Cancelled(Exception):
    pass


@pytest.mark.parametrize("name", sorted(CASES))
def test_raising_from_progress_cancels_stage_one(name):
    files, _, _ = CASES[name]
    bench = ml.load_benchmark(name, **files)
    preds = ml.load_predictions(name, bench, **files)
    seen: list[int] = []

    def cancel(done: int, total: int) -> None:
        seen.append(done)
        raise Cancelled

    with pytest.raises(Cancelled):
        Scorer(get_kind(name), bench, preds, progress=cancel)
    assert seen == [seen[0]]
