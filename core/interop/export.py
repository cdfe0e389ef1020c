"""``export``: a benchmark and its prediction sets as COCO JSON, a FiftyOne dataset directory or
per-sample CSV (what ``masklens export`` calls; keyword names as its flags)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from masklens.core.errors import MasklensError
from masklens.core.files.io import atomic_directory, atomic_write_json
from masklens.core.files.output_dirs import check_replaceable
from masklens.core.interop.coco import write_coco
from masklens.core.interop.csv_export import write_csv
from masklens.core.interop.fiftyone import write_fiftyone
from masklens.core.interop.table import ExportTable, build_table
from masklens.core.review.verdicts import Verdict
from masklens.core.schema import Benchmark, PredictionSet

#: format name -> writer(table, fresh folder, copy_images) -> files written
FORMATS: dict[str, Callable[[ExportTable, Path, bool], list[Path]]] = {
    "coco": lambda table, out, copy: write_coco(table, out),
    "fiftyone": lambda table, out, copy: write_fiftyone(table, out, copy_images=copy),
    "csv": lambda table, out, copy: write_csv(table, out),
}
#: the manifest every export folder holds; an existing --out without it is never replaced
MANIFEST = "masklens-export.json"
#: (t, τ) for kinds that have no such parameter of their own (COCO's usual values)
DEFAULT_SCORE_THRESHOLD = 0.5
DEFAULT_IOU_THRESHOLD = 0.5


def load_verdicts(paths: Sequence[str | os.PathLike[str]], benchmark: Benchmark) -> list[Verdict]:
    """The current verdicts on ``benchmark`` in the review databases ``paths`` (a verdict merged
    into several of them counts once)."""
    from masklens.core.review.locations import benchmark_key
    from masklens.core.review.store import Role, open_store

    key, seen, out = benchmark_key(benchmark), set(), []
    for p in paths:
        if not Path(p).is_file():
            raise MasklensError("review database not found", path=os.fspath(p))
        with open_store(p, Role.READ) as store:
            found = store.current(key)
            names = store.benchmarks()
            if not found and len(names) == 1:  # a store of one benchmark under another name
                found = store.current(names[0])
        for v in found:
            if v.uid not in seen:
                seen.add(v.uid)
                out.append(v)
    return out


def default_reviews(benchmark: Benchmark) -> list[Path]:
    """The benchmark's own review database (where the window records verdicts), if it exists."""
    from masklens.core.review.locations import default_store_path

    path = default_store_path(benchmark.sources)
    return [path] if path.is_file() else []


def _prediction_sets(kind: Any, benchmark: Benchmark, files: dict[str, Any],
                     predictions: Any, labels: Sequence[str] | None) -> list[tuple[str, PredictionSet]]:
    from masklens.core import api
    from masklens.core.scoring.kind_args import kind_parser, prediction_actions

    if predictions is not None:
        sets = list(predictions.items()) if isinstance(predictions, Mapping) else [
            (p.name, p) for p in (predictions if isinstance(predictions, Sequence) else [predictions])]
    else:
        dests = [a.dest for a in prediction_actions(kind_parser(kind))]
        given = {d: files.pop(d) for d in dests if files.get(d) is not None}
        lists = {d: list(v) if isinstance(v, list | tuple) else [v] for d, v in given.items()}
        n = max((len(v) for v in lists.values()), default=0)
        if any(len(v) not in (1, n) for v in lists.values()):
            raise MasklensError("repeat each prediction argument once per prediction set, in order")
        sets = []
        for i in range(n):
            one = {d: v[i] if len(v) == n else v[0] for d, v in lists.items()}
            first = next(iter(one.values()))
            sets.append((Path(str(first).rstrip("/")).stem, api.load_predictions(kind, benchmark, **one)))
    if labels:
        if len(labels) != len(sets):
            raise MasklensError(f"{len(labels)} labels for {len(sets)} prediction sets")
        sets = [(label, ps) for label, (_, ps) in zip(labels, sets, strict=True)]
    return sets


def export(
    kind: Any,
    to: str,
    out: str | os.PathLike[str],
    /,
    benchmark: Benchmark | None = None,
    predictions: PredictionSet | Sequence[PredictionSet] | Mapping[str, PredictionSet] | None = None,
    *,
    label: Sequence[str] | None = None,
    reviews: Sequence[str | os.PathLike[str]] | None = None,
    verdicts: Sequence[Verdict] | None = None,
    corrections: Sequence[str | os.PathLike[str]] | None = None,
    copy_images: bool = False,
    **kwargs: Any,
) -> list[Path]:
    """Export a benchmark and its prediction sets ``to`` "coco", "fiftyone" or "csv" into the
    folder ``out`` (written whole or not at all; an earlier export there is replaced).

    ``kwargs`` are ``masklens export KIND``'s flags as keywords: the kind's files (a prediction
    keyword may be a list, one prediction set each; ``label=[…]`` names them) and parameters;
    ``score_threshold``/``iou_threshold`` give (t, τ) of the per-instance outcomes where the kind
    has no such parameter (defaults 0.5). Verdicts come from ``reviews`` (review databases),
    ``verdicts``, or else the benchmark's own review database if there is one. ``corrections``
    (review databases): the ground truth is exported with their corrections applied (and the
    outcomes computed against it; the manifest counts them). Returns the files written.
    """
    from masklens.core import api

    if to not in FORMATS:
        raise MasklensError(f"unknown export format '{to}'", hint=f"formats: {', '.join(FORMATS)}")
    k = api.get_kind(kind)
    names = {p.name for p in k.params}
    t = kwargs.pop("score_threshold", None) if "score_threshold" not in names else None
    tau = kwargs.pop("iou_threshold", None) if "iou_threshold" not in names else None
    params = k.resolve_params({n: kwargs.pop(n) for n in list(kwargs) if n in names})
    t = params.get("score_threshold", DEFAULT_SCORE_THRESHOLD if t is None else float(t))
    tau = params.get("iou_threshold", DEFAULT_IOU_THRESHOLD if tau is None else float(tau))
    for name, value in (("score_threshold", t), ("iou_threshold", tau)):
        if not 0.0 <= value <= 1.0:
            raise MasklensError(f"{name} must be a number in [0, 1], got {value}")
    target = Path(out)
    inputs = [*kwargs.values(), reviews]
    checked = check_replaceable(target, inputs=inputs)
    files = dict(kwargs)
    if benchmark is None:
        benchmark = api.load_benchmark(k, **files)
    fixes = 0
    if corrections:
        from masklens.core.review.apply import store_corrections
        from masklens.core.review.corrections import corrected_benchmark
        from masklens.core.review.locations import benchmark_key

        rows = store_corrections(list(corrections), benchmark_key(benchmark))
        benchmark, fixes = corrected_benchmark(benchmark, rows), len(rows)
    sets = _prediction_sets(k, benchmark, files, predictions, label)
    if not sets:
        raise MasklensError("no predictions given", hint="give the kind's --pred/--pred-dir")
    if verdicts is None:
        verdicts = load_verdicts(list(reviews) if reviews else default_reviews(benchmark), benchmark)
    table = build_table(k, benchmark, sets, params, t, tau, verdicts)
    inputs += list(benchmark.sources.values())
    with atomic_directory(target, what="export", inputs=inputs, checked=checked) as tmp:
        written = FORMATS[to](table, tmp, copy_images)
        atomic_write_json(tmp / MANIFEST, {
            "format": to, "kind": k.name, "benchmark": benchmark.name,
            "prediction_sets": [run.label for run in table.runs],
            "params": params, "score_threshold": t, "iou_threshold": tau, "corrections": fixes,
            "files": [p.relative_to(tmp).as_posix() for p in written],
        })
    return [target / p.relative_to(tmp) for p in written]
