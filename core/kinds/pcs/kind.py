"""SA-Co/Gold promptable concept segmentation (PCS): loader, cgF1 scoring kind, COCO results I/O.

One ``Sample`` per image entry (an image–noun-phrase pair) of the first annotator file,
with one prompt (the entry's ``text_input``) and one ``GroundTruth`` per annotator file
(keys ``gt0``, ``gt1``, …). Predictions are COCO results ``{image_id, segmentation, score}``
with ``image_id`` = the entry id. Metrics: :mod:`masklens.core.kinds.common.cgf1.metrics`.

Summary group: ``all`` (one subset per run; pass a subset's annotator files with
repeated ``--gt``). Entries with ``is_instance_exhaustive: false`` in any annotator file
are loaded (to browse) but not scored; a missing field counts as exhaustive.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypedDict, cast

import numpy as np

from masklens.core.errors import DataFormatError
from masklens.core.files.paths import RootGuard
from masklens.core.kinds.common.cgf1.io import (
    add_images_flag,
    categories_of,
    image_path,
    instances_of,
    load_coco_predictions,
    non_crowd,
    non_crowd_categories,
    text_of,
    write_coco_results,
)
from masklens.core.kinds.common.cgf1.matching import assignment, category_order
from masklens.core.kinds.common.cgf1.metrics import entry_readout, summarize_groups
from masklens.core.kinds.common.cgf1.params import PCS_HELP, SCORE_THRESHOLD
from masklens.core.kinds.common.cgf1.results_ahead import ResultsAhead, read_results_ahead
from masklens.core.kinds.common.coco import CocoDataset, CocoImage
from masklens.core.kinds.pcs.annotator_files import (
    Annotator,
    AnnotatorColumns,
    AnnotatorFile,
    read_annotators,
)
from masklens.core.kinds.pcs.bulk import stack_entries
from masklens.core.kinds.pcs.records import EntryFields, EntryRecords
from masklens.core.kinds.pcs.stage1 import PcsOverlaps, all_overlaps
from masklens.core.masks import iou_matrix
from masklens.core.runtime.gc_pause import gc_paused
from masklens.core.schema import (
    Benchmark,
    GroundTruth,
    ImageRef,
    Prediction,
    PredictionSet,
    Prompt,
    Role,
    Sample,
)
from masklens.core.scoring.contract import BenchmarkKind, PathLike, Progress, Value
from masklens.core.scoring.overlaps import Overlaps, derived
from masklens.core.scoring.records import Records

__all__ = ["KIND", "PcsInstance", "PcsKind", "PcsRecord", "load_pcs"]

# ---------------------------------------------------------------- PCS loader
@gc_paused()
def load_pcs(paths: Sequence[str | os.PathLike[str]], images: str | os.PathLike[str] | None = None, *,
             workers: bool | None = None) -> Benchmark:
    """Load one SA-Co/Gold subset: one to three annotator files listing the same image entries.
    ``workers``: read the later annotator files in worker processes (True), here (False), or
    by the subset's size (None; :func:`~masklens.core.kinds.pcs.annotator_files.read_annotators`)."""
    if not paths:
        raise DataFormatError("give at least one ground-truth file (--gt)")
    annotators = read_annotators(paths, workers=workers)
    bulk = [a for a in annotators if isinstance(a, AnnotatorColumns)]
    samples = _samples_in_bulk(bulk, images) if len(bulk) == len(annotators) else None
    if samples is None:  # entry by entry, the first file read here (it names what is wrong)
        first = annotators[0] if isinstance(annotators[0], AnnotatorFile) else AnnotatorFile(paths[0])
        samples = _samples_one_by_one(first.dataset, [first, *annotators[1:]], images)
    sources = {f"gt{a}": other.path for a, other in enumerate(annotators)}
    if images is not None:
        sources["images"] = Path(images)
    return Benchmark("pcs", annotators[0].path.stem, samples, sources=sources, meta={"title": annotators[0].title})


def _samples_in_bulk(columns: list[AnnotatorColumns], images: str | os.PathLike[str] | None) -> list[Sample] | None:
    """The samples of annotator files in which nothing has a problem, listing the same
    entries in the same order at the same sizes, every text a string or absent; None for any
    other subset (:func:`_samples_one_by_one` reads it and reports what is wrong). The only
    error left to meet here is an image path's, which both forms meet in entry order."""
    first = columns[0]
    ids, heights, widths = first.ids, first.heights, first.widths
    if any(c.ids != ids or c.heights != heights or c.widths != widths for c in columns[1:]):
        return None
    if not all(t is None or isinstance(t, str) for t in first.texts):
        return None
    texts = [t if isinstance(t, str) else "" for t in first.texts]  # as text_of
    keys = [f"gt{a}" for a in range(len(columns))]
    gts_of = [c.ground_truths(key, texts) for key, c in zip(keys, columns, strict=True)]
    flags = [all(f) for f in zip(*(c.flags for c in columns), strict=True)] if len(columns) > 1 else first.flags
    guard = RootGuard(images) if images is not None else None
    last_path = columns[-1].path  # (image_path names the last annotator file)
    paths: dict[str | None, Path | None] = {}
    samples: list[Sample] = []
    entries = zip(ids, first.file_names, heights, widths, texts, flags, zip(*gts_of, strict=True), strict=True)
    for image_id, file_name, h, w, text, is_exh, gts in entries:
        path = paths.get(file_name, _UNSEEN)
        if path is _UNSEEN:
            path = paths[file_name] = image_path(images, CocoImage(image_id, file_name, h, w, {}), last_path, guard)
        role = Role.POSITIVE if False in (gts[0].crowd or ()) else Role.NEGATIVE
        prompt = Prompt(str(image_id), text, role, "image", "gt0", None, image_id, {"exhaustive": is_exh})
        ref = ImageRef("image", path, h, w, image_id)
        samples.append(Sample(prompt.id, {"image": ref}, dict(zip(keys, gts, strict=True)), [prompt], "all",
                              {"exhaustive": is_exh, "file_name": file_name}))
    return samples


_UNSEEN = Path()  # (a memo's miss: image_path never answers the empty path)


def _samples_one_by_one(base: CocoDataset, annotators: list[Annotator],
                        images: str | os.PathLike[str] | None) -> list[Sample]:
    """The samples, entry by entry and annotator by annotator, each check where the entry
    meets it: the first error met is the one reported."""
    for other in annotators[1:]:
        extra = [i for i in other.image_ids() if i not in base.images]
        gone = [i for i in base.images if not other.has_image(i)]
        if extra or gone:
            which = f"image id {(extra or gone)[0]!r}"
            raise DataFormatError(
                f"{'extra' if extra else 'missing'} image entry: annotator files must list the "
                f"same image entries as {base.path}",
                path=other.path,
                record=which,
            )
    keyed = [(f"gt{a}", other) for a, other in enumerate(annotators)]
    last_path = annotators[-1].path  # (image_path names the last annotator file)
    samples: list[Sample] = []
    guard = RootGuard(images) if images is not None else None
    for img in base.images.values():
        text = text_of(img, base.path, required=False)
        is_exh = True
        gts: dict[str, GroundTruth] = {}
        for key, other in keyed:
            h, w = other.size(img.id)
            if h != img.height or w != img.width:
                raise DataFormatError(
                    f"size {h}x{w} differs from {img.height}x{img.width} in {base.path}",
                    path=other.path,
                    record=f"image id {img.id}",
                )
            flag = other.exhaustive(img.id)
            is_exh = is_exh and flag
            gts[key] = other.ground_truth(img.id, key, text)
        # entry_gt's crowd flags are bools, one per mask: a non-crowd instance is a False
        crowd = gts["gt0"].crowd
        assert crowd is not None, "entry_gt sets the crowd flags"
        role = Role.POSITIVE if False in crowd else Role.NEGATIVE
        prompt = Prompt(
            id=str(img.id),
            text=text,
            role=role,
            image="image",
            gt="gt0",
            source_id=img.id,
            meta={"exhaustive": is_exh},
        )
        samples.append(
            Sample(
                id=prompt.id,
                images={
                    "image": ImageRef(
                        "image", image_path(images, img, last_path, guard), img.height, img.width, img.id
                    )
                },
                gts=gts,
                prompts=[prompt],
                group="all",
                meta={"exhaustive": is_exh, "file_name": img.file_name},
            )
        )
    return samples


# ---------------------------------------------------------------- PCS kind
class PcsInstance(TypedDict):
    score: float
    iou: float  # best IoU with the oracle annotator's instances
    accepted: bool  # score ≥ t


#: one entry's record (docs/metrics.md, SA-Co/Gold): the entry, then its cgF1 counts at t
#: against the oracle annotator (functional form: the keys hold "@")
PcsRecord = TypedDict("PcsRecord", {
    "id": str,
    "image_id": int | str | None,
    "text": str,
    "exhaustive": bool,
    "missing": bool,
    "n_pred": int,
    "max_score": float,
    "n_accepted": int,
    "n_gt": int,
    "annotator": int,
    "IL": str,
    "TP@0.5": int,
    "TP@0.75": int,
    "FP@0.5": int,
    "FN@0.5": int,
    "local_F1": float | None,
    "instances": list[PcsInstance],
})


class PcsKind(BenchmarkKind[PcsOverlaps]):
    name = "pcs"
    title = "SA-Co/Gold (PCS, cgF1)"
    groups = ("all",)
    params = (SCORE_THRESHOLD,)
    metric_help = PCS_HELP

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--gt",
            action="append",
            required=True,
            metavar="FILE",
            help="annotator file of the subset (repeat for the 3-annotator oracle)",
        )
        parser.add_argument("--pred", required=True, metavar="FILE", help="COCO results JSON")
        add_images_flag(parser)

    def load_benchmark(self, *, gt: Sequence[PathLike], images: PathLike | None = None, **_: Any) -> Benchmark:
        return load_pcs(gt, images)

    def read_predictions_ahead(self, *, pred: PathLike | None = None, gt: Sequence[PathLike] = (),
                               **_: Any) -> ResultsAhead | None:
        """A large results file read in a worker process while the annotator files load."""
        return read_results_ahead(pred, gt)

    def load_predictions(self, benchmark: Benchmark, /, *, pred: PathLike, ahead: ResultsAhead | None = None,
                         **_: Any) -> PredictionSet:
        return load_coco_predictions(pred, benchmark, digest=ahead.digest() if ahead is not None else None)

    def write_predictions(
        self, benchmark: Benchmark, predictions: PredictionSet, out: Path
    ) -> list[Path]:
        return write_coco_results(benchmark, predictions, out, "pcs_results.json")

    def corrected_sample(self, sample: Sample) -> Sample:
        """After ground-truth corrections: the prompt is positive when ``gt0`` keeps a non-crowd
        instance, as the loader decides."""
        crowd = sample.gts["gt0"].crowd or []
        role = Role.POSITIVE if False in crowd else Role.NEGATIVE
        return replace(sample, prompts=[replace(p, role=role) for p in sample.prompts])

    def write_corrected(
        self, original: Benchmark, corrected: Benchmark, out: Path, files: Mapping[str, Any]
    ) -> list[Path]:
        from masklens.core.kinds.pcs.corrected import write_corrected

        return write_corrected(original, corrected, out, files)

    def sample_overlaps(self, sample: Sample, predictions: PredictionSet) -> PcsOverlaps:
        return self.all_overlaps([sample], predictions)[0]

    def all_overlaps(
        self, samples: list[Sample], predictions: PredictionSet, progress: Progress | None = None
    ) -> list[PcsOverlaps]:
        return all_overlaps(samples, predictions, progress)

    def sample_readout(
        self, sample: Sample, overlaps: PcsOverlaps, params: Mapping[str, float]
    ) -> PcsRecord:
        t = params["score_threshold"]
        prompt = sample.prompts[0]
        entry = entry_readout(overlaps.table, t)
        # entry_readout's record is a dict of mixed values; "annotator" is the oracle's index
        ious = overlaps.best_ious[cast(int, entry["annotator"])]
        return cast(PcsRecord, {
            "id": sample.id,
            "image_id": prompt.source_id,
            "text": prompt.text,
            "exhaustive": overlaps.exhaustive,
            "missing": overlaps.missing,
            "n_pred": len(overlaps.scores),
            "max_score": max(overlaps.scores, default=0.0),
            **entry,
            "instances": [
                {"score": s, "iou": v, "accepted": s >= t}
                for s, v in zip(overlaps.scores, ious, strict=True)
            ],
        })

    def sample_readouts(
        self, samples: Sequence[Sample], overlaps: Sequence[PcsOverlaps], params: Mapping[str, float]
    ) -> Records:
        """Vectorised :meth:`sample_readout` (the same records): a lookup of each entry's
        row at t in tables built once per overlaps list, no matching and no mask; a record
        is built and copied when first read (:class:`~masklens.core.scoring.records.Records`).
        One sample in a list without a memo (the window's shown sample): its record directly."""
        if len(overlaps) == 1 and not isinstance(overlaps, Overlaps):
            return Records.of([self.sample_readout(samples[0], overlaps[0], params)])
        return self._tables(samples, overlaps)["records"].at(params["score_threshold"])

    def _tables(self, samples: Sequence[Sample], overlaps: Sequence[PcsOverlaps]) -> dict[str, Any]:
        """Threshold-free, built once per overlaps list (:meth:`_build_tables`)."""
        return derived(overlaps, "pcs.tables", lambda: self._build_tables(samples, overlaps))

    @gc_paused()
    def _build_tables(self, samples: Sequence[Sample], overlaps: Sequence[PcsOverlaps]) -> dict[str, Any]:
        """Every entry stacked (the metrics read the exhaustive ones) and the per-row records."""
        stack = stack_entries(
            [o.ordered_scores for o in overlaps],
            [o.ious for o in overlaps],
            np.array([o.ngt for o in overlaps], dtype=np.int64).reshape(
                len(overlaps), len(overlaps[0].ngt) if overlaps else 1
            ),
        )
        static = EntryFields(samples, overlaps)
        records = EntryRecords(
            stack, static, [o.scores for o in overlaps], [o.best_ious for o in overlaps]
        )
        exhaustive = np.fromiter(
            (o.exhaustive for o in overlaps), dtype=bool, count=len(overlaps)
        )
        return {"stack": stack, "members": exhaustive[None], "records": records,
                "notes": self._notes(overlaps)}  # fmt: skip

    def instance_matches(
        self, sample: Sample, prediction: Prediction | None, params: Mapping[str, float], annotator: int
    ) -> list[dict[str, Any]]:
        """Per predicted instance (file order): its score, whether s ≥ t, and the non-crowd
        ground-truth instance of ``annotator`` (``gt``: index, None when unmatched) the one Hungarian
        assignment of cgF1 gives it among the accepted predictions, with that IoU. Counting the IoUs
        ≥ 0.5 gives the record's TP@0.5. Touches masks: for one sample on demand (the readout card)."""
        t = params["score_threshold"]
        gt = list(sample.gts.values())[annotator]
        masks, scores = instances_of(prediction, gt.height, gt.width)
        # the same instance order as the scorer's matching (SAM 3's category order), so a tie
        # between two equally good assignments resolves as it did for the record's TP counts
        cats = categories_of(prediction)
        ordered = [i for i in category_order(cats) if scores[i] >= t]
        truth = non_crowd(gt)
        cols = category_order(non_crowd_categories(gt))
        ious = (iou_matrix([masks[i] for i in ordered], [truth[c] for c in cols])
                if ordered and truth else np.zeros((0, 0)))
        matched = {ordered[r]: (cols[c], float(ious[r, c])) for r, c in assignment(ious)}
        return [{"instance": i, "score": s, "accepted": s >= t,
                 "gt": matched[i][0] if i in matched else None,
                 "iou": matched[i][1] if i in matched else None} for i, s in enumerate(scores)]

    def summarize(
        self,
        samples: Sequence[Sample],
        overlaps: Sequence[PcsOverlaps],
        readouts: Sequence[Mapping[str, Any]],
        params: Mapping[str, float],
    ) -> dict[str, dict[str, Value]]:
        tables = self._tables(samples, overlaps)
        t = params["score_threshold"]
        return {"all": summarize_groups(tables["stack"], t, tables["members"])[0]}

    def notes(self, samples: Sequence[Sample], overlaps: Sequence[PcsOverlaps]) -> list[str]:
        return list(self._tables(samples, overlaps)["notes"])

    @staticmethod
    def _notes(overlaps: Sequence[PcsOverlaps]) -> list[str]:
        out = []
        skipped = sum(not o.exhaustive for o in overlaps)
        if skipped:
            out.append(f"{skipped} entries not instance-exhaustive: excluded from the metrics")
        missing = sum(o.missing for o in overlaps)
        if missing:
            out.append(f"{missing} entries have no prediction entry at all (scored as empty)")
        return out


KIND = PcsKind()
