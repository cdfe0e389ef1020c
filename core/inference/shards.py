"""Shards of a benchmark for `--shard I/N` (SLURM arrays, plain multi-process runs) and their merge.

The unit of work is an *image group*: the samples linked by a shared image file or a shared
prompt (a CAFE positive asked in two pairs), so every image is encoded by exactly one shard and
every sample is whole in one shard. Groups are assigned greedily, largest prompt count first
(ties in benchmark order), to the shard with the fewest prompts so far (ties: lowest index): a
deterministic partition balanced by prompt count, the same in every process that computes it.

A shard's predictions are written in the benchmark's own format, with a sidecar
``OUT.shard.json`` naming the shard and its samples; :func:`merge_shards` reads the sidecars
to find overlaps and gaps (the prediction formats cannot tell "no instance" from "not run").
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from masklens.core.errors import DataFormatError, MasklensError
from masklens.core.schema import Benchmark, PredictionSet

SIDECAR_SUFFIX = ".shard.json"
_FORMAT = 1


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (0-based)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``"I/N"`` -> Shard(I, N), 0 <= I < N, each written in at most 30 ASCII digits; anything
    else (spaces, other digits such as ``０``, a 4,400-digit number) is a MasklensError."""
    m = re.fullmatch(r"([0-9]{1,30})/([0-9]{1,30})", text or "")  # ASCII digits only, no spaces
    if not m or int(m[2]) < 1 or int(m[1]) >= int(m[2]):
        raise MasklensError(f"--shard expects I/N with 0 <= I < N, got '{text}'",
                            hint="e.g. --shard 0/4 … --shard 3/4 ($SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)")
    return Shard(int(m[1]), int(m[2]))


def image_groups(benchmark: Benchmark, images_dir: str | Path | None = None) -> list[list[int]]:
    """Sample indices grouped by shared image files and shared prompt ids, in benchmark order."""
    from masklens.core.inference.runner import resolve_image_path

    parent = list(range(len(benchmark.samples)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    source = next(iter(benchmark.sources.values()), None)
    for i, sample in enumerate(benchmark.samples):
        links = [f"prompt:{p.id}" for p in sample.prompts]
        for p in sample.prompts:
            ref = sample.images.get(p.image)
            if ref is not None:
                path = resolve_image_path(ref, images_dir, sample=sample.id, source=source)
                links.append(f"image:{path.resolve()}")
        for link in links:
            j = owner.setdefault(link, i)
            a, b = find(i), find(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(len(benchmark.samples)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def partition(benchmark: Benchmark, count: int, images_dir: str | Path | None = None,
              groups: list[list[int]] | None = None) -> list[list[int]]:
    """The sample indices of each of ``count`` shards (each list in benchmark order);
    ``groups``: :func:`image_groups` when already computed."""
    groups = image_groups(benchmark, images_dir) if groups is None else groups
    if count > max(len(groups), 1):  # more shards than groups: some would be empty
        raise MasklensError(f"{count} shards of {len(groups)} image group(s): at most {len(groups)}",
                            field="--shard", hint="use fewer shards")
    weight = [sum(len(benchmark.samples[i].prompts) for i in g) for g in groups]
    order = sorted(range(len(groups)), key=lambda g: (-weight[g], groups[g][0]))
    load = [0] * count
    shards: list[list[int]] = [[] for _ in range(count)]
    for g in order:
        target = min(range(count), key=lambda s: (load[s], s))
        load[target] += weight[g]
        shards[target].extend(groups[g])
    return [sorted(s) for s in shards]


def fingerprint(benchmark: Benchmark) -> str:
    """A hash of the benchmark's samples and prompts: shards of another benchmark do not merge."""
    h = hashlib.blake2b(digest_size=12)
    for s in benchmark.samples:
        h.update(s.id.encode())
        for p in s.prompts:
            h.update(b"\x00" + p.id.encode())
        h.update(b"\x01")
    return h.hexdigest()


def shard_benchmark(benchmark: Benchmark, shard: Shard, images_dir: str | Path | None = None) -> Benchmark:
    """The samples of ``shard`` as a benchmark (meta ``shard`` records which and of what)."""
    groups = image_groups(benchmark, images_dir)
    if shard.count > len(groups):  # checked before anything is sized by N (N may be 10**20)
        raise MasklensError(
            f"shard {shard} holds no images: the benchmark has only {len(groups)} image group(s), "
            f"so N may be at most {len(groups)}", field="--shard", hint="use fewer shards")
    indices = partition(benchmark, shard.count, images_dir, groups)[shard.index]
    keep = [benchmark.samples[i] for i in indices]
    meta = {**benchmark.meta, "shard": {"index": shard.index, "count": shard.count,
                                        "benchmark": fingerprint(benchmark)}}
    return Benchmark(benchmark.kind, benchmark.name, keep, dict(benchmark.sources), meta)


def sidecar_path(out: str | Path) -> Path:
    p = Path(out)
    return p.with_name(p.name + SIDECAR_SUFFIX)


def write_sidecar(out: str | Path, kind: str, shard_bench: Benchmark, predictions: PredictionSet) -> Path:
    """Record beside a shard's output which shard it is and which samples it answers."""
    from masklens.core.files.io import atomic_write_json, json_safe

    info = shard_bench.meta["shard"]
    target = sidecar_path(out)
    atomic_write_json(target, {
        "format": _FORMAT, "kind": kind, "shard": [info["index"], info["count"]],
        "benchmark": info["benchmark"], "samples": [s.id for s in shard_bench.samples],
        "missing": sorted(predictions.missing),
        "digest": output_digest(out),
        "settings": json_safe(settings(predictions)),
    })
    return target


def output_digest(out: str | Path) -> str | None:
    """A hash of what the output ``out`` holds (a file's bytes; a folder's files by relative
    path, masklens' marker left out), so that merge notices an output changed after its shard
    ran (e.g. a ``[]`` put in its place); None when it cannot be read."""
    from masklens.core.files.output_dirs import MARKER

    p = Path(out)
    h = hashlib.blake2b(digest_size=16)
    try:
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file() and f.name != MARKER)
        for f in files:
            h.update(f.relative_to(p).as_posix().encode("utf-8", "surrogateescape") + b"\0")
            with f.open("rb") as fh:
                while chunk := fh.read(1 << 20):
                    h.update(chunk)
            h.update(b"\1")
    except OSError:
        return None
    return h.hexdigest()


#: provenance entries that may differ between shards of one run (where each shard ran)
_PER_PROCESS = ("device",)


def settings(predictions: PredictionSet) -> dict[str, Any]:
    """What made the predictions (model, checkpoint, thresholds, options): shards that merge
    must agree on it."""
    return {str(k): v for k, v in predictions.provenance.items() if k not in _PER_PROCESS}


def _read_sidecar(pred: Path, kind: str) -> dict[str, Any]:
    from masklens.core.files.io import read_json

    side = sidecar_path(pred)
    if not side.is_file() and pred.is_file():  # a file inside an output folder (evaluate's)
        side = sidecar_path(pred.parent) if sidecar_path(pred.parent).is_file() else side
    if not side.is_file():
        raise DataFormatError(
            f"no shard record beside the prediction output ({side.name})", path=pred,
            hint="merge reads outputs of `masklens predict … --shard I/N`, which writes OUT" + SIDECAR_SUFFIX,
        )
    data = read_json(side)  # within the JSON limits (size, depth): a DataFormatError naming it
    try:
        shard = Shard(*(int(v) for v in data["shard"]))
        samples = [str(s) for s in data["samples"]]
        missing = [str(s) for s in data.get("missing", [])]
        bench = str(data["benchmark"])
        k = str(data["kind"])
        digest = data.get("digest")
        settings = data.get("settings")
        if not (0 <= shard.index < shard.count) or not isinstance(digest, str | None) \
                or not isinstance(settings, dict | None):
            raise ValueError("fields out of range")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DataFormatError(f"unreadable shard record ({exc})", path=side) from None
    if k != kind:
        raise DataFormatError(f"this is a shard of a {k} run, not {kind}", path=side, field="kind")
    return {"shard": shard, "samples": samples, "missing": missing, "benchmark": bench, "file": side,
            "digest": digest, "settings": settings, "subject": side.with_name(side.name[:-len(SIDECAR_SUFFIX)])}


def _differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


def merge_shards(kind: Any, benchmark: Benchmark, preds: Sequence[str | Path]) -> PredictionSet:
    """One PredictionSet from shard outputs; a sample in two shards (overlap), in none (gap), or
    a shard of another benchmark is a MasklensError naming the files and samples."""
    from masklens.core.inference.evaluate import subset

    if not preds:
        raise MasklensError("merge needs at least one --pred")
    fp = fingerprint(benchmark)
    owner: dict[str, Path] = {}
    merged = PredictionSet(name="merged", provenance={"merged_from": [str(p) for p in preds]})
    seen_shards: dict[Shard, Path] = {}
    first: dict[str, Any] | None = None
    for pred in map(Path, preds):
        side = _read_sidecar(pred, kind.name)
        if side["benchmark"] != fp:
            raise DataFormatError("this shard was made from another benchmark (its samples or prompts differ)",
                                  path=side["file"], field="benchmark")
        if side["shard"].count > len(benchmark.samples):
            raise DataFormatError(f"shard {side['shard']}: more shards than the benchmark's "
                                  f"{len(benchmark.samples)} samples", path=side["file"], field="shard")
        if first is None:
            first = side
        elif (diff := _differences(first["settings"] or {}, side["settings"] or {})):
            raise DataFormatError(
                f"this shard was made with other model settings than {first['file']} "
                f"({', '.join(diff[:5])} differ)", path=side["file"], field="settings",
                hint="merge only the shards of one run (same model, checkpoint and options)")
        if side["shard"] in seen_shards:
            raise MasklensError(f"shard {side['shard']} given twice: {seen_shards[side['shard']]} and {pred}")
        seen_shards[side["shard"]] = pred
        twice = [s for s in side["samples"] if s in owner]
        if twice:
            raise MasklensError(
                f"overlapping shards: {len(twice)} sample(s) are in both {owner[twice[0]]} and {pred}, "
                f"e.g. {', '.join(twice[:3])}", hint="give each shard's output once")
        owner.update(dict.fromkeys(side["samples"], pred))
        part = subset(benchmark, samples=side["samples"])
        if side["digest"] is not None and output_digest(side["subject"]) != side["digest"]:
            raise DataFormatError(
                "this prediction output is not the one its shard record was written for (it was "
                "changed or replaced after the shard ran)", path=side["subject"],
                hint=f"run shard {side['shard']} again")
        loaded = kind.load_predictions(part, **{_pred_dest(kind): str(pred)})
        missing = set(side["missing"])
        for sample in part.samples:
            for prompt in sample.prompts:
                if prompt.id in missing or prompt.id in loaded.missing:
                    merged.missing.add(prompt.id)
                elif (p := loaded.get(prompt.id)) is not None:
                    merged.by_prompt[prompt.id] = p
    gaps = [s.id for s in benchmark.samples if s.id not in owner]
    if gaps:
        counts = sorted({s.count for s in seen_shards})
        absent = [f"{i}/{n}" for n in counts for i in range(n) if Shard(i, n) not in seen_shards]
        raise MasklensError(
            f"gap: {len(gaps)} sample(s) are in no given shard, e.g. {', '.join(gaps[:3])}",
            hint=f"shards not given: {', '.join(absent[:8])}" if absent else "run the missing shards",
        )
    return merged


def _pred_dest(kind: Any) -> str:
    from masklens.core.scoring.kind_args import kind_parser, prediction_actions

    actions = prediction_actions(kind_parser(kind))
    if len(actions) != 1:  # pragma: no cover - every kind reads one prediction input
        raise MasklensError(f"{kind.name}: cannot tell which argument reads predictions")
    return actions[0].dest
