"""CAFE (counterfactual attribute factuality): the scoring kind (docs/metrics.md, CAFE).

Samples come from :func:`~masklens.core.kinds.cafe.io.load_cafe`: one per (positive,
negative) pair, both prompts asked on the edited image and scored against the target
(``gts = {"target", "pos_entry", "neg_entry"}``; the entries' full annotation lists feed
cgF1). Groups ``Overall``, ``SM``, ``CC``, ``OC``.
"""

from __future__ import annotations

import argparse
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, TypedDict, cast

import numpy as np

from masklens.core.errors import MasklensError
from masklens.core.kinds.cafe.io import GROUPS, load_cafe
from masklens.core.kinds.cafe.metrics import (
    CLASS_FLAGS,
    PAIR_HELP,
    classify_pair,
    code_counts,
    rates,
)
from masklens.core.kinds.cafe.stacks import build_stacks
from masklens.core.kinds.cafe.stage1 import CafeOverlaps, all_overlaps
from masklens.core.kinds.common.cgf1.io import (
    add_images_flag,
    load_coco_predictions,
    write_coco_results,
)
from masklens.core.kinds.common.cgf1.metrics import (
    summarize_groups,
)
from masklens.core.kinds.common.cgf1.params import PCS_HELP, SCORE_THRESHOLD
from masklens.core.kinds.common.cgf1.results_ahead import ResultsAhead, read_results_ahead
from masklens.core.runtime.gc_pause import gc_paused
from masklens.core.schema import Benchmark, PredictionSet, Sample
from masklens.core.scoring.contract import (
    BenchmarkKind,
    ParamSpec,
    PathLike,
    Progress,
    Value,
    in_runs,
)
from masklens.core.scoring.overlaps import Overlaps, derived
from masklens.core.scoring.records import MemoRows, Records

__all__ = ["CAFE_HELP", "IOU_THRESHOLD", "KIND", "CafeInstance", "CafeKind", "CafeRecord"]

IOU_THRESHOLD = ParamSpec(
    "iou_threshold",
    "--iou-threshold",
    0.3,
    help="an instance is target-aligned when its IoU with the target is ≥ τ",
    symbol="τ",
)

CAFE_HELP: dict[str, str] = {
    **PAIR_HELP,
    **{k: v for k, v in PCS_HELP.items() if k not in ("N", "IL_FPR")},
    "N_entries": "image entries of the file (positive and negative, paired or not) in the group's cgF1",
    "IL_FPR_pcs": "SAM 3's IL_FPR over the group's image entries: IL_FP / (IL_FP + IL_TN + 1e-6)",
}


_FLAGS = [flags for row in CLASS_FLAGS for flags in row]  # index: positive * 3 + negative


class CafeInstance(TypedDict):
    score: float
    iou: float  # with the target


class CafeRecord(TypedDict):
    """One pair's record (docs/metrics.md, CAFE): the threshold-free fields, then the classes
    and 0/1 flags at (t, τ)."""

    id: str
    edit_type: str
    pos_image_id: int | str | None
    neg_image_id: int | str | None
    SoftSwap: int
    pos_max_score: float
    neg_max_score: float
    pos_max_iou: float
    neg_max_iou: float
    pos_missing: bool
    neg_missing: bool
    pos_instances: list[CafeInstance]
    neg_instances: list[CafeInstance]
    pos_class: str
    neg_class: str
    TA_TP: int
    TA_FN: int
    UA_P: int
    TA_FN_paper: int
    UA_FN: int
    TA_FP: int
    UA_FP: int
    TN: int
    ACS: int
    UCS: int


class CafeKind(BenchmarkKind[CafeOverlaps]):
    name = "cafe"
    title = "CAFE"
    groups = GROUPS
    group_name = "edit_type"  # the annotation file's field and the paper's word (SM, CC, OC)
    params = (SCORE_THRESHOLD, IOU_THRESHOLD)
    metric_help = CAFE_HELP
    gt_aliases = {"target": "pos_entry"}  # the target is the positive entry's first instance

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--ann", required=True, metavar="FILE", help="CAFE annotation JSON")
        parser.add_argument("--pred", required=True, metavar="FILE", help="COCO results JSON")
        add_images_flag(parser)

    def load_benchmark(self, *, ann: PathLike, images: PathLike | None = None, **_: Any) -> Benchmark:
        return load_cafe(ann, images)

    def read_predictions_ahead(self, *, pred: PathLike | None = None, ann: PathLike | None = None,
                               **_: Any) -> ResultsAhead | None:
        """A large results file read in a worker process while the annotation file loads."""
        return read_results_ahead(pred, [ann])

    def load_predictions(self, benchmark: Benchmark, /, *, pred: PathLike, ahead: ResultsAhead | None = None,
                         **_: Any) -> PredictionSet:
        # records on images of the file in no scored pair are the orphan entries' (for cgF1)
        orphans = benchmark.samples[0].meta.get("orphan_entries", []) if benchmark.samples else []
        extra = {o.image_id: (o.prompt_id, (o.gt.height, o.gt.width)) for o in orphans}
        sizes = benchmark.meta.get("image_sizes", {})
        return load_coco_predictions(pred, benchmark, ignorable=sizes, extra=extra,
                                     digest=ahead.digest() if ahead is not None else None)

    def write_predictions(
        self, benchmark: Benchmark, predictions: PredictionSet, out: Path
    ) -> list[Path]:
        return write_coco_results(benchmark, predictions, out, "cafe_results.json")

    def corrected_sample(self, sample: Sample) -> Sample:
        """After ground-truth corrections (core/review/corrections.py): the target is again the
        positive entry's first instance, as the loader makes it."""
        pos = sample.gts["pos_entry"]
        if not pos.masks:
            raise MasklensError(
                f"the corrections delete every instance of the positive image of pair {sample.id}",
                record=f"sample {sample.id}", field="pos_entry",
                hint="CAFE drops a pair whose positive has no annotation; keep one instance")
        target = sample.gts["target"]
        gts = dict(sample.gts, target=replace(target, masks=[pos.masks[0]]))
        return replace(sample, gts=gts)

    def ground_truth_home(self, sample: Sample, gt_key: str) -> Hashable | None:
        """The image entry an entry ground truth is loaded from (a positive image may be paired
        with several negatives: a correction of it holds in every pair)."""
        for p in sample.prompts:
            if p.meta.get("entry_gt") == gt_key:
                return ("image", p.source_id)
        return None

    def write_corrected(
        self, original: Benchmark, corrected: Benchmark, out: Path, files: Mapping[str, Any]
    ) -> list[Path]:
        from masklens.core.kinds.cafe.corrected import write_corrected

        return write_corrected(original, corrected, out, files)

    # ---------------------------------------------------------------- stage 1
    def sample_overlaps(self, sample: Sample, predictions: PredictionSet) -> CafeOverlaps:
        return all_overlaps([sample], predictions)[0]

    def all_overlaps(
        self, samples: list[Sample], predictions: PredictionSet, progress: Progress | None = None
    ) -> list[CafeOverlaps]:
        """Every sample's :meth:`sample_overlaps` in bulk (the IoUs in few pycocotools calls),
        in runs of samples when progress is reported."""
        return in_runs(partial(all_overlaps, predictions=predictions), samples, progress)

    # ---------------------------------------------------------------- stage 2
    def sample_readout(
        self, sample: Sample, overlaps: CafeOverlaps, params: Mapping[str, float]
    ) -> CafeRecord:
        flags = classify_pair(overlaps.pair, params["score_threshold"], params["iou_threshold"])
        del flags["SoftSwap"]
        return cast(CafeRecord, {**overlaps.static, **flags})

    def sample_readouts(
        self, samples: Sequence[Sample], overlaps: Sequence[CafeOverlaps], params: Mapping[str, float]
    ) -> Records:
        """Vectorised: every pair classified at once, records from per-class flag tables
        (memoised; a fresh copy of a record when it is first read: :class:`Records`). One
        sample in a list without a memo (the window's shown sample): its record directly."""
        if len(overlaps) == 1 and not isinstance(overlaps, Overlaps):
            return Records.of([self.sample_readout(samples[0], overlaps[0], params)])
        with gc_paused():  # many acyclic dicts (see masklens.core.runtime.gc_pause)
            return self._readouts(samples, overlaps, params)

    def _readouts(
        self, samples: Sequence[Sample], overlaps: Sequence[CafeOverlaps], params: Mapping[str, float]
    ) -> Records:
        cache = self._derived(samples, overlaps)
        pc, nc = self._codes(cache, params)
        # a pair has at most 12 (positive, negative) class states: its record per state is
        # built once (memo slot 12 * pair + state) when first read, and copied for the reader
        slots = np.arange(len(overlaps)) * 12 + pc * 3 + nc
        memo, built, statics = cache["records"], cache["built"], cache["statics"]

        def build(new: np.ndarray) -> None:
            for j in new.tolist():
                memo[j] = {**statics[j // 12], **_FLAGS[j % 12]}
            built[new] = True

        return Records(MemoRows(memo, built, slots, build))

    def _derived(self, samples: Sequence[Sample], overlaps: Sequence[CafeOverlaps]) -> dict[str, Any]:
        return derived(overlaps, "cafe.stacks", lambda: self._stacks(samples, overlaps))

    @gc_paused()
    def _stacks(self, samples: Sequence[Sample], overlaps: Sequence[CafeOverlaps]) -> dict[str, Any]:
        """Threshold-free, built once per overlaps list (:func:`cafe_stacks.build_stacks`),
        with the codes of the latest (t, τ) and the memoised records."""
        out = build_stacks(samples, overlaps)
        out["codes"] = {}
        out["records"] = np.empty(12 * len(overlaps), dtype=object)  # memo (see _readouts)
        out["built"] = np.zeros(12 * len(overlaps), dtype=bool)
        out["statics"] = [o.static for o in overlaps]
        return out

    @staticmethod
    def _codes(cache: dict[str, Any], params: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
        key = (params["score_threshold"], params["iou_threshold"])
        codes: tuple[np.ndarray, np.ndarray] | None = cache["codes"].get(key)
        if codes is None:
            codes = cache["pairs"].codes(*key)
            cache["codes"] = {key: codes}  # keep the latest only (one swap: another thread's read holds)
        return codes

    def summarize(
        self,
        samples: Sequence[Sample],
        overlaps: Sequence[CafeOverlaps],
        readouts: Sequence[Mapping[str, Any]],
        params: Mapping[str, float],
    ) -> dict[str, dict[str, Value]]:
        cache = self._derived(samples, overlaps)
        pc, nc = self._codes(cache, params)
        soft = cache["pairs"].soft
        entries = summarize_groups(
            cache["entries"], params["score_threshold"], cache["entry_members"]
        )
        out: dict[str, dict[str, Value]] = {}
        for g, m, pcs in zip(GROUPS, cache["pair_members"], entries, strict=True):
            summary = rates(code_counts(pc[m], nc[m], soft[m]), int(m.sum()))
            pcs["N_entries"] = pcs.pop("N")
            pcs["IL_FPR_pcs"] = pcs.pop("IL_FPR")
            summary.update(pcs)
            out[g] = summary
        return out

    def notes(self, samples: Sequence[Sample], overlaps: Sequence[CafeOverlaps]) -> list[str]:
        out = []
        info = samples[0].meta.get("load_info", {}) if samples else {}
        if info.get("dropped_pairs"):
            out.append(
                f"{info['dropped_pairs']} pairs dropped: their positive image has no annotation"
            )
        if info.get("orphan_entries"):
            out.append(
                f"{info['orphan_entries']} image entries in no scored pair: counted in cgF1 "
                "(SAM 3's evaluator over the file), not in the pair metrics"
            )
        missing = self._derived(samples, overlaps)["missing"]
        if missing:
            out.append(f"{missing} prompts have no prediction entry at all (scored as empty)")
        return out


KIND = CafeKind()
