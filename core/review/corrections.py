"""Ground-truth corrections: reviewers' new masks kept as data beside the benchmark, never over it.

A :class:`Correction` says that one reviewer replaced one ground-truth instance of one sample
(``gt_key`` + ``instance``, the index in the loaded :class:`~masklens.core.schema.GroundTruth`)
by a new mask, deleted it (``mask=None``), or added a new instance (``instance=None``). Rows
live in the review store's append-only ``corrections`` table
(:meth:`ReviewStore.add_correction <masklens.core.review.store.ReviewStore.add_correction>`);
an undone correction is followed by a retraction row, as for verdicts.

The *effective* corrections (:func:`effective_corrections`): retracted rows and retractions
left out, then the last row per (benchmark, sample, gt_key, instance, reviewer); every added
instance is its own entry (to change an added instance, retract it and add the new one).
:func:`corrected_benchmark` applies them to a loaded benchmark (a new Benchmark; the original
objects stay untouched), :func:`changed_samples` names the samples they touch and
:func:`correction_conflicts` finds instances two reviewers corrected differently.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from masklens.core.errors import DataFormatError, MasklensError
from masklens.core.files.json_depth import json_depth_exceeds
from masklens.core.masks import Mask
from masklens.core.schema import Benchmark, GroundTruth, Sample

#: the tools a correction may name (the window's Correct mode); other names are accepted too
TOOLS = ("brush", "eraser", "polygon", "fill", "model", "clear", "delete", "new", "category", "import")
#: how a correction's ``tool`` joins several tools: "brush+eraser+fill" (in the order of first use)
TOOL_SEPARATOR = "+"


def join_tools(tools: Iterable[str]) -> str:
    """The ``tool`` of a correction made with ``tools`` (each kept once, in order)."""
    return TOOL_SEPARATOR.join(dict.fromkeys(t for t in tools if t))


def tool_names(tool: str) -> list[str]:
    """The tools a correction's ``tool`` names ("polygon" of an older row: one)."""
    return [t for t in tool.split(TOOL_SEPARATOR) if t]


@dataclass(frozen=True)
class Correction:
    """One correction row. ``instance`` None: a new instance; ``mask`` None: the instance is
    deleted; ``category``: the instance's new category where the kind has categories (JSON
    value), None to keep it; ``time`` ISO 8601 UTC; ``verdict_uid`` the uid of the verdict this
    correction answers ("" for none); ``retracts`` the uid of the row a retraction takes back."""

    benchmark: str
    sample_id: str
    gt_key: str
    instance: int | None
    mask: Mask | None
    tool: str
    reviewer: str
    time: str
    note: str
    verdict_uid: str
    uid: str
    category: Any = None
    retracts: str = ""

    @property
    def target(self) -> tuple[str, str, str, int | str]:
        """What the correction changes: (benchmark, sample, gt key, instance index or, for a
        new instance, the row's uid). The gt key is the canonical one: a kind whose ground
        truths repeat another's instances (CAFE's ``target`` = ``pos_entry`` instance 0) names
        them in ``gt_aliases``, so both spellings are the same instance."""
        inst: int | str = self.uid if self.instance is None else self.instance
        return (self.benchmark, self.sample_id, canonical_gt(self.benchmark, self.gt_key), inst)

    @property
    def deleted(self) -> bool:
        return self.mask is None and not self.retracts


def canonical_gt(benchmark: str, gt_key: str) -> str:
    """The ground truth a correction of ``gt_key`` lands in, by the kind's ``gt_aliases``
    (the kind is the ``kind:`` prefix of the benchmark key)."""
    kind = _kind(benchmark.split(":", 1)[0])
    aliases = kind.gt_aliases if kind is not None else {}
    return aliases.get(gt_key, gt_key)


def _kind(name: str) -> Any:
    from masklens.core.scoring.contract import get_kind

    try:
        return get_kind(name)
    except (MasklensError, ImportError):  # an unknown kind, or a plug-in kind that does not import
        return None


#: the corrections table's columns, in :class:`Correction`'s order (mask stored as JSON RLE)
COLUMNS = ("benchmark", "sample_id", "gt_key", "instance", "mask", "tool", "reviewer", "time",
           "note", "verdict_uid", "uid", "category", "retracts")


def create_tables(db: Any) -> None:
    """Schema v4 (a step of the store's MIGRATIONS): the corrections and assignments tables."""
    db.execute(
        "CREATE TABLE corrections ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " benchmark TEXT NOT NULL, sample_id TEXT NOT NULL, gt_key TEXT NOT NULL,"
        " instance INTEGER,"  # NULL: a new instance
        " mask TEXT,"  # compressed COCO RLE as JSON {"size": [h, w], "counts": "…"}; NULL: deleted
        " tool TEXT NOT NULL DEFAULT '', reviewer TEXT NOT NULL, time TEXT NOT NULL,"
        " note TEXT NOT NULL DEFAULT '', verdict_uid TEXT NOT NULL DEFAULT '',"
        " uid TEXT NOT NULL UNIQUE, category TEXT,"  # category: a JSON value; NULL: unchanged
        " retracts TEXT NOT NULL DEFAULT '')"
    )
    db.execute("CREATE INDEX corrections_key ON corrections(benchmark, sample_id, gt_key)")
    db.execute(
        "CREATE TABLE assignments ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " batch TEXT NOT NULL, benchmark TEXT NOT NULL, reviewer TEXT NOT NULL,"
        " position INTEGER NOT NULL, sample_id TEXT NOT NULL, shared INTEGER NOT NULL DEFAULT 0,"
        " seed INTEGER, time TEXT NOT NULL, UNIQUE (batch, reviewer, sample_id))"
    )
    db.execute("CREATE INDEX assignments_key ON assignments(benchmark, reviewer)")


def to_row(c: Correction) -> tuple[Any, ...]:
    """The SQLite row of a correction (COLUMNS order)."""
    mask = None if c.mask is None else json.dumps(c.mask.to_coco(), separators=(",", ":"))
    category = None if c.category is None else json.dumps(c.category)
    return (c.benchmark, c.sample_id, c.gt_key, c.instance, mask, c.tool, c.reviewer, c.time,
            c.note, c.verdict_uid, c.uid, category, c.retracts)


#: columns that hold text and may not be NULL / may be NULL (read back as "")
_TEXT = ("benchmark", "sample_id", "gt_key", "reviewer", "time", "uid")
_TEXT_OR_EMPTY = ("tool", "note", "verdict_uid", "retracts")
#: nesting a stored mask or category may have (an RLE is one object of a list and a string)
MAX_CELL_DEPTH = 32


def from_row(row: Sequence[Any], *, path: str | Path | None = None, row_id: Any = None) -> Correction:
    """A correction from its SQLite row (COLUMNS order), every cell checked as untrusted input:
    text where text belongs, ``instance`` NULL or an integer ≥ 0, ``mask`` and ``category``
    JSON nested at most :data:`MAX_CELL_DEPTH` deep. A bad cell is a DataFormatError naming the
    file, the table and row, and the column."""
    values = dict(zip(COLUMNS, row, strict=True))
    record = f"corrections row id {row_id}" if row_id is not None else f"correction {values['uid']}"

    def bad(column: str, what: str) -> DataFormatError:
        return DataFormatError(what, path=path, record=record, field=column,
                               hint="the store was edited outside masklens; "
                               "`masklens review check` lists every such cell")

    for column in (*_TEXT, *_TEXT_OR_EMPTY):
        v = values[column]
        if v is None and column in _TEXT_OR_EMPTY:
            values[column] = ""
        elif isinstance(v, bytes):
            try:
                values[column] = v.decode("utf-8")
            except UnicodeDecodeError:
                raise bad(column, "holds binary data where text is expected") from None
        elif not isinstance(v, str):
            raise bad(column, f"holds {_cell_type(v)} where text is expected")
    inst = values["instance"]
    if inst is not None and (type(inst) is not int or inst < 0):
        raise bad("instance", f"holds {_cell_type(inst)} {inst!r} where an instance index "
                  "(an integer ≥ 0) or NULL is expected")
    parsed: dict[str, Any] = {}
    for column in ("mask", "category"):
        v = values[column]
        if v is None:
            parsed[column] = None
            continue
        if not isinstance(v, str | bytes):
            raise bad(column, f"holds {_cell_type(v)} where JSON text is expected")
        raw = v if isinstance(v, bytes) else v.encode("utf-8", "surrogatepass")
        if json_depth_exceeds(raw, MAX_CELL_DEPTH):
            raise bad(column, f"nests deeper than {MAX_CELL_DEPTH} levels")
        try:
            parsed[column] = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise bad(column, f"is not valid JSON ({exc})") from None
    try:
        mask = None if parsed["mask"] is None else Mask.from_coco(
            parsed["mask"], path=path, record=record, field="mask")
    except (ValueError, TypeError) as exc:
        raise bad("mask", f"unreadable mask ({exc})") from None
    return Correction(**{**values, "mask": mask, "category": parsed["category"], "instance": inst})


def _cell_type(v: Any) -> str:
    return {int: "an integer", float: "a real number", str: "text", bytes: "binary data",
            type(None): "NULL"}.get(type(v), type(v).__name__)


# ------------------------------------------------------------------ readings
def effective_corrections(rows: Iterable[Correction]) -> list[Correction]:
    """Retractions applied, then the last row per (target, reviewer), oldest first."""
    rows = list(rows)
    retracted = {c.retracts for c in rows if c.retracts}
    latest: dict[tuple[Any, ...], Correction] = {}
    for c in rows:
        if c.retracts or c.uid in retracted:
            continue
        key = (*c.target, c.reviewer)
        latest.pop(key, None)  # re-inserted: the dict keeps the latest rows in time order
        latest[key] = c
    return list(latest.values())


def changed_samples(corrections: Iterable[Correction]) -> set[str]:
    """The ids of the samples the (effective) corrections change."""
    return {c.sample_id for c in corrections if not c.retracts}


@dataclass(frozen=True)
class CorrectionConflict:
    """One instance corrected differently by several reviewers (their effective corrections)."""

    benchmark: str
    sample_id: str
    gt_key: str
    instance: int
    corrections: tuple[Correction, ...]

    @property
    def reviewers(self) -> list[str]:
        return sorted({c.reviewer for c in self.corrections})

    def describe(self) -> str:
        parts = [f"{c.reviewer}: {_what(c)}" for c in self.corrections]
        return (f"sample {self.sample_id}, {self.gt_key} instance {self.instance}: "
                + "; ".join(parts))


def _what(c: Correction) -> str:
    if c.mask is None:
        return f"deleted ({c.tool or 'no tool'})"
    cat = "" if c.category is None else f", category {c.category!r}"
    return f"new mask of area {c.mask.area}{cat} ({c.tool or 'no tool'})"


def correction_conflicts(corrections: Iterable[Correction]) -> list[CorrectionConflict]:
    """Existing instances that two or more reviewers corrected differently (a different mask, a
    deletion against a new mask, or a different category). Reviewers who agree are no
    conflict; added instances never conflict (each is its own instance)."""
    by_target: dict[tuple[Any, ...], dict[str, Correction]] = {}
    for c in effective_corrections(corrections):
        if c.instance is not None:
            by_target.setdefault(c.target, {})[c.reviewer] = c
    out = []
    for (bench, sid, key, inst), per in by_target.items():
        answers = {(c.mask, json.dumps(c.category)) for c in per.values()}
        if len(per) > 1 and len(answers) > 1:
            rows = tuple(sorted(per.values(), key=lambda c: c.reviewer))
            out.append(CorrectionConflict(bench, sid, key, int(inst), rows))
    return out


# ------------------------------------------------------------------ applying
def corrected_benchmark(
    benchmark: Benchmark,
    corrections: Iterable[Correction],
    *,
    adjust: Callable[[Sample], Sample] | None = None,
) -> Benchmark:
    """A new Benchmark with the (effective) corrections applied, in time order, to the samples
    they name; unchanged samples are shared, changed ones are new objects (the original
    Sample, GroundTruth and mask lists stay untouched). Instance indices refer to the loaded
    ground truth; deletions are applied last, so indices never shift under later rows.

    ``adjust`` (default: the kind's ``corrected_sample`` when the kind defines one) fixes up a
    changed sample for what its kind derives from the instances (e.g. CAFE's target = the
    positive entry's first instance). A correction naming an unknown sample, ground truth or
    instance, or a mask of another size, raises :class:`MasklensError` naming the correction.
    """
    corrections = sorted(effective_corrections(corrections), key=lambda c: c.time)
    rows = [dataclasses.replace(c, gt_key=c.target[2]) for c in corrections]
    kind = _kind(benchmark.kind)
    from masklens.core.scoring.contract import SharedGroundTruth

    rows = _with_twins(benchmark, rows, kind.ground_truth_home if isinstance(kind, SharedGroundTruth) else None)
    if adjust is None and kind is not None:
        adjust = kind.corrected_sample
    by_sample: dict[str, list[Correction]] = {}
    for c in rows:
        by_sample.setdefault(c.sample_id, []).append(c)
    index = {s.id: i for i, s in enumerate(benchmark.samples)}
    samples = list(benchmark.samples)
    for sid, group in by_sample.items():
        if sid not in index:
            raise MasklensError(f"corrects sample {sid!r}, which this benchmark does not have",
                                record=f"correction {group[0].uid}", field="sample_id",
                                hint="was the store made for another version of the benchmark?")
        new = _corrected_sample(samples[index[sid]], group)
        samples[index[sid]] = adjust(new) if adjust else new
    meta = dict(benchmark.meta, corrections=len(corrections))
    return Benchmark(benchmark.kind, benchmark.name, samples, sources=dict(benchmark.sources),
                     meta=meta)


def _with_twins(benchmark: Benchmark, rows: list[Correction],
                home: Callable[[Sample, str], Any] | None) -> list[Correction]:
    """``rows`` plus, for a ground truth that several samples load from the same annotations
    (the kind's ``ground_truth_home``: CAFE's positive image paired with several negatives),
    the same correction in each of the other samples, so they stay alike."""
    if home is None or not rows:
        return rows
    places: dict[Any, list[tuple[str, str]]] = {}
    for s in benchmark.samples:
        for key in s.gts:
            h = home(s, key)
            if h is not None:
                places.setdefault(h, []).append((s.id, key))
    out = []
    for c in rows:
        out.append(c)
        try:
            h = home(benchmark.sample(c.sample_id), c.gt_key)
        except KeyError:
            continue  # an unknown sample: reported by the caller
        for sid, key in places.get(h, []) if h is not None else []:
            if (sid, key) != (c.sample_id, c.gt_key):
                out.append(dataclasses.replace(c, sample_id=sid, gt_key=key))
    return out


def _corrected_sample(sample: Sample, rows: list[Correction]) -> Sample:
    gts = dict(sample.gts)
    for key in dict.fromkeys(c.gt_key for c in rows):
        if key not in gts:
            c = next(c for c in rows if c.gt_key == key)
            raise MasklensError(f"sample {sample.id!r} has no ground truth {key!r}",
                                record=f"correction {c.uid}", field="gt_key")
        gts[key] = _corrected_gt(gts[key], [c for c in rows if c.gt_key == key])
    return dataclasses.replace(sample, gts=gts, meta=dict(sample.meta))


def _corrected_gt(gt: GroundTruth, rows: list[Correction]) -> GroundTruth:
    masks = list(gt.masks)
    crowd = list(gt.crowd) if gt.crowd is not None else [False] * len(masks)
    cats = list(gt.meta.get("category_ids") or [None] * len(masks))
    cats += [None] * (len(masks) - len(cats))
    deleted: set[int] = set()
    for c in rows:
        rec = f"correction {c.uid}"
        if c.mask is not None and c.mask.shape != (gt.height, gt.width):
            raise MasklensError(
                f"mask is {c.mask.height}x{c.mask.width}, the ground truth is {gt.height}x{gt.width}",
                record=rec, field="mask")
        if c.instance is None:
            if c.mask is None:
                raise MasklensError("a new instance needs a mask", record=rec, field="mask")
            masks.append(c.mask)
            crowd.append(False)
            cats.append(c.category)
            continue
        if not 0 <= c.instance < len(gt.masks):
            raise MasklensError(
                f"instance {c.instance} does not exist ({gt.key!r} has {len(gt.masks)})",
                record=rec, field="instance")
        if c.mask is None:
            deleted.add(c.instance)
            continue
        deleted.discard(c.instance)
        masks[c.instance] = c.mask
        if c.category is not None:
            cats[c.instance] = c.category
    keep = [i for i in range(len(masks)) if i not in deleted]
    meta = dict(gt.meta)
    # where each instance came from: its index in the loaded ground truth, None for a new one
    # (the kinds' writers keep the original records of the instances that stay)
    meta["corrected_from"] = [i if i < len(gt.masks) else None for i in keep]
    if "category_ids" in gt.meta or any(x is not None for x in cats):
        meta["category_ids"] = [cats[i] for i in keep]
    return dataclasses.replace(
        gt, masks=[masks[i] for i in keep],
        crowd=None if gt.crowd is None else [crowd[i] for i in keep], meta=meta,
    )


def changelog(benchmark: Benchmark, corrections: Iterable[Correction]) -> list[dict[str, Any]]:
    """One JSON-ready entry per effective correction, oldest first: who, when, why (the note),
    which tool, what (replaced / deleted / added), and the instance's area before and after and
    the IoU of its masks before and after (None where one side is absent)."""
    from masklens.core.masks import iou

    out = []
    for c in sorted(effective_corrections(corrections), key=lambda c: c.time):
        key = c.target[2]
        gt = benchmark.sample(c.sample_id).gts.get(key) if _has(benchmark, c.sample_id) else None
        before = (gt.masks[c.instance] if gt is not None and c.instance is not None
                  and 0 <= c.instance < len(gt.masks) else None)
        action = "added" if c.instance is None else "deleted" if c.mask is None else "replaced"
        out.append({
            "uid": c.uid, "reviewer": c.reviewer, "time": c.time, "note": c.note, "tool": c.tool,
            "action": action, "sample_id": c.sample_id, "gt_key": key, "instance": c.instance,
            "category": c.category, "verdict_uid": c.verdict_uid or None,
            "area_before": None if before is None else before.area,
            "area_after": None if c.mask is None else c.mask.area,
            "iou_before_after": (None if before is None or c.mask is None
                                 or before.shape != c.mask.shape else round(iou(before, c.mask), 6)),
        })
    return out


def _has(benchmark: Benchmark, sample_id: str) -> bool:
    try:
        benchmark.sample(sample_id)
    except KeyError:
        return False
    return True


def corrected_scorer(scorer: Any, corrections: Iterable[Correction]) -> Any:
    """A :class:`~masklens.core.scoring.contract.Scorer` of ``scorer``'s benchmark with the
    corrections applied that re-reads only the changed samples' threshold-free stage (the
    kind's ``all_overlaps`` on each run of consecutive changed samples) and shares every other
    sample's cache; ``scorer`` itself is unchanged."""
    import copy

    from masklens.core.runtime.gc_pause import gc_paused

    corrected = corrected_benchmark(scorer.benchmark, corrections)
    changed = {s.id for s, o in zip(corrected.samples, scorer.benchmark.samples, strict=True) if s is not o}
    new = copy.copy(scorer)
    new.benchmark, new.overlaps = corrected, list(scorer.overlaps)
    runs: list[list[int]] = []
    for i, s in enumerate(corrected.samples):
        if s.id in changed:
            if runs and runs[-1][-1] == i - 1:
                runs[-1].append(i)
            else:
                runs.append([i])
    with gc_paused():
        for run in runs:
            lo, hi = run[0], run[-1] + 1
            new.overlaps[lo:hi] = scorer.kind.all_overlaps(corrected.samples[lo:hi], scorer.predictions)
    return new
