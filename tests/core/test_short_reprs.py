"""Benchmark, PredictionSet, Scorer and the kinds show themselves in a few lines, as FiftyOne's
datasets do (the dataclass repr of an 18-sample demo benchmark printed every sample and mask:
23.5 kB)."""

from __future__ import annotations

import pytest

import masklens.core as ml
from masklens.core.kinds.demo import demo_files
from masklens.core.scoring.contract import get_kind, kind_names


@pytest.mark.parametrize("kind", ["cafe", "pcs", "hallusegbench", "cgebench", "r2sm", "ovs"])
def test_benchmark_and_scorer_reprs_are_short_summaries(kind):
    files = demo_files(kind)
    bench = ml.load_benchmark(kind, **files)
    text = repr(bench)
    assert len(text) < 600 and len(text.splitlines()) <= 6, text
    assert f"Benchmark {bench.name!r}" in text and f"samples:  {len(bench.samples)} " in text
    scorer = ml.Scorer(kind, **files)
    shown = repr(scorer)
    assert len(shown) < 600 and f"Scorer({kind})" in shown and "instances=" in shown


def test_the_benchmark_repr_counts_the_groups():
    bench = ml.load_benchmark("cafe", **demo_files("cafe"))
    assert "groups:   SM 6, CC 6, OC 6" in repr(bench)


@pytest.mark.parametrize("name", kind_names())
def test_kind_reprs_name_the_kind_its_groups_and_parameters(name):
    kind = get_kind(name)
    text = repr(kind)
    assert text.startswith(f"BenchmarkKind {name!r}") and len(text) < 400
    for p in kind.params:
        assert f"{p.name}={p.default:g}" in text
