"""CAFE (counterfactual attribute factuality): the scoring kind (docs/metrics.md, CAFE).

Samples come from :func:`~masklens.core.benchmarks.cafe_io.load_cafe` (re-exported here):
one per (positive, negative) pair, both prompts asked on the edited image and scored
against the target (``gts = {"target", "pos_entry", "neg_entry"}``; the entries' full
annotation lists feed cgF1). Groups ``Overall``, ``SM``, ``CC``, ``OC``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from masklens.core.benchmarks.cafe_io import EDIT_TYPES, GROUPS, OrphanEntry, edit_group, load_cafe
from masklens.core.benchmarks.pcs import PCS_HELP, SCORE_THRESHOLD
from masklens.core.benchmarks.pcs_io import (
    add_images_flag,
    categories_of,
    instances_of,
    load_coco_predictions,
    non_crowd,
    non_crowd_categories,
    write_coco_results,
)
from masklens.core.errors import DataFormatError
from masklens.core.masks import Mask, iou_matrix
from masklens.core.metrics.cafe import (
    CLASS_FLAGS,
    PAIR_HELP,
    PairScores,
    PairStack,
    classify_pair,
    code_counts,
    rates,
)
from masklens.core.metrics.pcs import (
    EntryStack,
    EntryTable,
    ordered_entry_table,
    summarize_groups,
)
from masklens.core.schema import Benchmark, PredictionSet, Prompt, Role, Sample
from masklens.core.scoring import BenchmarkKind, OverlapsCache, ParamSpec, PathLike, Value

__all__ = [  # the loader's names stay importable from here (re-exported)
    "CAFE_HELP",
    "EDIT_TYPES",
    "GROUPS",
    "IOU_THRESHOLD",
    "KIND",
    "CafeKind",
    "CafeOverlaps",
    "EntrySource",
    "edit_group",
    "load_cafe",
]

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


#: an entry with at most one non-crowd instance: (scores, IoUs with it, or None without one);
#: otherwise its full matching table
EntrySource = tuple[tuple[float, ...], tuple[float, ...] | None] | EntryTable


@dataclass
class CafeOverlaps:
    """Threshold-free cache of one pair: scores/IoUs, entry tables, the static part of its record."""

    pair: PairScores
    pos_table: EntrySource  # the positive entry's matching data (cgF1)
    neg_table: EntrySource
    pos_entry: tuple[Any, bool]  # (image id, counts in cgF1)
    neg_entry: tuple[Any, bool]
    static: dict[str, Any]  # threshold-free fields of the per-pair record
    #: image entries in no scored pair that ride on this sample: (image id, table, group or None)
    orphans: tuple[tuple[Any, EntrySource, str | None], ...] = ()


def _entry_source(
    masks: list[Mask], scores: tuple[float, ...], gts: list[Mask],
    categories: list[Any], gt_categories: list[Any],
) -> EntrySource:
    """An entry's cgF1 matching data; with several instances, in SAM 3's category order."""
    if not gts:
        return (scores, None)
    if len(gts) == 1:
        return (scores, tuple(float(v) for v in iou_matrix(masks, gts)[:, 0]))
    return ordered_entry_table(scores, [iou_matrix(masks, gts)], categories, [gt_categories])


def _orphan_sources(
    orphans: list[OrphanEntry], predictions: PredictionSet
) -> tuple[tuple[Any, EntrySource, str | None], ...]:
    """cgF1 matching data of the exhaustive entries in no scored pair."""
    out = []
    for o in orphans:
        if not o.exhaustive:
            continue
        pred = predictions.get(o.prompt_id)
        masks, scores = instances_of(pred, o.gt.height, o.gt.width)
        src = _entry_source(masks, scores, non_crowd(o.gt), categories_of(pred),
                            non_crowd_categories(o.gt))  # fmt: skip
        out.append((o.image_id, src, o.group))
    return tuple(out)


_FLAGS = [flags for row in CLASS_FLAGS for flags in row]  # index: positive * 3 + negative
_POSITIVE, _NEGATIVE = Role.POSITIVE, Role.NEGATIVE


def _prompt_of(sample: Sample, role: Role) -> Prompt | None:
    return next((pr for pr in sample.prompts if pr.role == role), None)


def _prompt(sample: Sample, role: Role) -> Prompt:
    for pr in sample.prompts:
        if pr.role == role:
            return pr
    raise DataFormatError(f"CAFE sample has no {role.value} prompt", record=sample.id)


class CafeKind(BenchmarkKind):
    name = "cafe"
    title = "CAFE"
    groups = GROUPS
    params = (SCORE_THRESHOLD, IOU_THRESHOLD)
    metric_help = CAFE_HELP

    def __init__(self) -> None:
        self._cache = OverlapsCache()

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--ann", required=True, metavar="FILE", help="CAFE annotation JSON")
        parser.add_argument("--pred", required=True, metavar="FILE", help="COCO results JSON")
        add_images_flag(parser)

    def load_benchmark(self, *, ann: PathLike, images: PathLike | None = None, **_: Any) -> Benchmark:
        return load_cafe(ann, images)

    def load_predictions(self, benchmark: Benchmark, /, *, pred: PathLike, **_: Any) -> PredictionSet:
        # records on images of the file in no scored pair are the orphan entries' (for cgF1)
        orphans = benchmark.samples[0].meta.get("orphan_entries", []) if benchmark.samples else []
        extra = {o.image_id: (o.prompt_id, (o.gt.height, o.gt.width)) for o in orphans}
        sizes = benchmark.meta.get("image_sizes", {})
        return load_coco_predictions(pred, benchmark, ignorable=sizes, extra=extra)

    def write_predictions(
        self, benchmark: Benchmark, predictions: PredictionSet, out: Path
    ) -> list[Path]:
        return write_coco_results(benchmark, predictions, out, "cafe_results.json")

    # ---------------------------------------------------------------- stage 1
    def sample_overlaps(self, sample: Sample, predictions: PredictionSet) -> CafeOverlaps:
        pos = neg = None
        for pr in sample.prompts:
            if pr.role is _POSITIVE:
                pos = pos or pr
            elif pr.role is _NEGATIVE:
                neg = neg or pr
        if pos is None or neg is None:
            _prompt(sample, Role.NEGATIVE if pos else Role.POSITIVE)  # raises the error
        target = sample.gts[pos.gt or "target"]
        h, w = target.height, target.width
        pos_pred, neg_pred = predictions.get(pos.id), predictions.get(neg.id)
        pos_masks, pos_scores = instances_of(pos_pred, h, w)
        neg_masks, neg_scores = instances_of(neg_pred, h, w)
        pos_gt = sample.gts.get(pos.meta.get("entry_gt", ""), target)
        neg_gt = sample.gts.get(neg.meta.get("entry_gt", ""))
        pos_nc = non_crowd(pos_gt)
        # one RLE IoU call: both prompts against the target (column 0) and the positive entry's
        # other non-crowd instances (for its cgF1 matching)
        first = target.masks[0] if target.masks else None
        gts = [first] if first is not None else []
        gts += [m for m in pos_nc if m is not first]
        n_pos = len(pos_masks)
        mat = iou_matrix(pos_masks + neg_masks, gts)
        if first is not None:
            ious = mat[:, 0].tolist() if len(gts) > 1 else mat.ravel().tolist()
        else:
            ious = [0.0] * mat.shape[0]
        pos_ious, neg_ious = tuple(ious[:n_pos]), tuple(ious[n_pos:])
        if len(pos_nc) == 1 and pos_nc[0] is first:
            pos_table: EntrySource = (pos_scores, pos_ious)  # the target IoUs serve
        elif len(pos_nc) <= 1:
            col = gts.index(pos_nc[0]) if pos_nc else -1  # identity: gts holds pos_nc's masks
            pos_table = (pos_scores, tuple(mat[:n_pos, col].tolist()) if pos_nc else None)
        else:
            column = {id(m): j for j, m in enumerate(gts)}
            cols = [column[id(m)] for m in pos_nc]
            pos_table = ordered_entry_table(
                pos_scores, [mat[:n_pos][:, cols]], categories_of(pos_pred),
                [non_crowd_categories(pos_gt)],
            )  # fmt: skip
        neg_nc = non_crowd(neg_gt) if neg_gt else []
        neg_table = (neg_scores, None) if not neg_nc else _entry_source(
            neg_masks, neg_scores, neg_nc, categories_of(neg_pred), non_crowd_categories(neg_gt)
        )
        pos_max = max(pos_scores) if pos_scores else 0.0
        neg_max = max(neg_scores) if neg_scores else 0.0
        static = {
            "id": sample.id,
            "edit_type": sample.group,
            "pos_image_id": pos.source_id,
            "neg_image_id": neg.source_id,
            "SoftSwap": int(neg_max > pos_max),
            "pos_max_score": pos_max,
            "neg_max_score": neg_max,
            "pos_max_iou": max(pos_ious) if pos_ious else 0.0,
            "neg_max_iou": max(neg_ious) if neg_ious else 0.0,
            "pos_missing": pos_pred is None,
            "neg_missing": neg_pred is None,
            "pos_instances": [
                {"score": a, "iou": b} for a, b in zip(pos_scores, pos_ious, strict=True)
            ],
            "neg_instances": [
                {"score": a, "iou": b} for a, b in zip(neg_scores, neg_ious, strict=True)
            ],
        }
        return CafeOverlaps(
            PairScores(pos_scores, pos_ious, neg_scores, neg_ious),
            pos_table,
            neg_table,
            (pos.source_id, bool(pos.meta.get("exhaustive", True))),
            (neg.source_id, bool(neg.meta.get("exhaustive", True))),
            static,
            _orphan_sources(sample.meta.get("orphan_entries", []), predictions),
        )

    # ---------------------------------------------------------------- stage 2
    def sample_readout(
        self, sample: Sample, overlaps: CafeOverlaps, params: Mapping[str, float]
    ) -> dict[str, Any]:
        flags = classify_pair(overlaps.pair, params["score_threshold"], params["iou_threshold"])
        del flags["SoftSwap"]
        return {**overlaps.static, **flags}

    def sample_readouts(
        self, samples: list[Sample], overlaps: list[CafeOverlaps], params: Mapping[str, float]
    ) -> list[dict[str, Any]]:
        """Vectorised: every pair classified at once, records from per-class flag tables."""
        cache = self._cache.get(overlaps, lambda: self._stacks(samples, overlaps))
        pc, nc = self._codes(cache, params)
        memo = cache["records"]
        # a pair has at most 12 (positive, negative) class states: its record per state is
        # built once (memo slot 12 * pair + state) and handed out as a (shallow) copy
        slots = (np.arange(len(overlaps)) * 12 + pc * 3 + nc).tolist()
        if not slots:
            return []
        recs = itemgetter(*slots)(memo) if len(slots) > 1 else (memo[slots[0]],)
        if None in recs:
            for j in slots:
                if memo[j] is None:
                    memo[j] = {**overlaps[j // 12].static, **_FLAGS[j % 12]}
            recs = itemgetter(*slots)(memo) if len(slots) > 1 else (memo[slots[0]],)
        return list(map(dict.copy, recs))

    def _stacks(self, samples: list[Sample], overlaps: list[CafeOverlaps]) -> dict[str, Any]:
        """Threshold-free, built once per overlaps list: all pairs flattened, the distinct
        image entries of the file (an entry shared by pairs counts once; entries in no
        scored pair ride on a sample's ``orphans``) and group memberships. An entry belongs
        to the group of its own edit type (a negative without one: its positive's; a
        positive without one: the groups of its pairs), as the per-subset files of
        ``run_eval.sh`` list entries."""
        tables: dict[Any, EntrySource] = {}
        bits: dict[Any, int] = {}  # entry -> bit g - 1 set when it belongs to group GROUPS[g]
        bit_of = {g: 1 << i for i, g in enumerate(GROUPS[1:])}
        for s, o in zip(samples, overlaps, strict=True):
            pair_bit = bit_of.get(s.group, 0)
            for (key, counts), table, prompt in (
                (o.pos_entry, o.pos_table, _prompt_of(s, _POSITIVE)),
                (o.neg_entry, o.neg_table, _prompt_of(s, _NEGATIVE)),
            ):
                if not counts:
                    continue
                own = prompt.meta.get("entry_group") if prompt is not None else None
                bit = bit_of.get(own, 0) if own is not None else pair_bit
                if key in bits:
                    bits[key] |= bit if own is None else 0  # an entry shared by pairs
                else:
                    tables[key], bits[key] = table, bit
            for key, table, group in o.orphans:
                if key not in bits:
                    tables[key], bits[key] = table, bit_of.get(group, 0)
        single = [k for k, t in tables.items() if not isinstance(t, EntryTable)]
        multi = [k for k, t in tables.items() if isinstance(t, EntryTable)]
        stack = EntryStack.concat(
            [
                EntryStack.from_single([tables[k] for k in single]),  # type: ignore[misc]
                EntryStack.build([tables[k] for k in multi]),  # type: ignore[misc]
            ]
        )
        keys = single + multi
        key_bits = np.fromiter(map(bits.__getitem__, keys), dtype=np.int64, count=len(keys))
        entry_members = np.ones((len(GROUPS), len(keys)), dtype=bool)
        for g in range(1, len(GROUPS)):
            entry_members[g] = (key_bits >> (g - 1)) & 1 == 1
        codes = np.fromiter(
            (bit_of.get(s.group, 0) for s in samples), dtype=np.int64, count=len(samples)
        )
        return {
            "entries": stack,
            "entry_members": entry_members,
            "pair_members": [codes == codes]
            + [codes == bit_of[g] for g in GROUPS[1:]],
            "pairs": PairStack.build(
                [o.pair for o in overlaps], [o.static["SoftSwap"] for o in overlaps]
            ),
            "missing": sum(o.static["pos_missing"] + o.static["neg_missing"] for o in overlaps),
            "codes": {},
            "records": [None] * (12 * len(overlaps)),
        }

    @staticmethod
    def _codes(cache: dict[str, Any], params: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
        key = (params["score_threshold"], params["iou_threshold"])
        if key not in cache["codes"]:
            cache["codes"] = {key: cache["pairs"].codes(*key)}  # keep the latest only
        return cache["codes"][key]

    def summarize(
        self,
        samples: list[Sample],
        overlaps: list[CafeOverlaps],
        readouts: list[dict[str, Any]],
        params: Mapping[str, float],
    ) -> dict[str, dict[str, Value]]:
        cache = self._cache.get(overlaps, lambda: self._stacks(samples, overlaps))
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

    def notes(self, samples: list[Sample], overlaps: list[CafeOverlaps]) -> list[str]:
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
        missing = self._cache.get(overlaps, lambda: self._stacks(samples, overlaps))["missing"]
        if missing:
            out.append(f"{missing} prompts have no prediction entry at all (scored as empty)")
        return out


KIND = CafeKind()
