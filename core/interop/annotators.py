"""Benchmarks whose prompts have several annotators' ground truth (SA-Co/Gold: one annotator file
each, loaded as the sample's ``gt0``, ``gt1``, …; the prompt is scored against ``gt0``, SAM 3's
oracle against each). A registry by kind: the export writes one ground truth per annotator."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from masklens.core.schema import Benchmark, Prompt, Role, Sample

_NUMBERED = re.compile(r"gt(\d+)")


def numbered_gts(benchmark: Benchmark) -> list[str]:
    """The ground truths named ``gt0``, ``gt1``, … that every sample holds, in number order."""
    if not benchmark.samples:
        return []
    common = set(benchmark.samples[0].gts)
    for sample in benchmark.samples[1:]:
        common &= set(sample.gts)
    keys = [k for k in common if _NUMBERED.fullmatch(k)]
    return sorted(keys, key=lambda k: int(k[2:]))


#: kind name -> the annotators' ground-truth keys of a loaded benchmark (first: the prompts' own)
ANNOTATORS: dict[str, Callable[[Benchmark], list[str]]] = {
    "pcs": numbered_gts,
}


def annotators(kind_name: str, benchmark: Benchmark) -> list[str]:
    """The annotators' ground-truth keys when there are two or more, else ``[]``."""
    find = ANNOTATORS.get(kind_name)
    keys = find(benchmark) if find is not None else []
    return keys if len(keys) > 1 else []


def as_annotator(sample: Sample, prompt: Prompt, key: str) -> Prompt:
    """``prompt`` scored against annotator ``key``'s ground truth: positive when that annotator
    drew a non-crowd instance, else negative (as the loader sets the role from ``gt0``)."""
    gt = sample.gts[key]
    drawn = any(not (gt.crowd and gt.crowd[i]) for i in range(len(gt.masks)))
    return replace(prompt, gt=key, role=Role.POSITIVE if drawn else Role.NEGATIVE)
