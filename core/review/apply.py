"""``masklens review apply``: a benchmark written again in its own format with the corrections
of review stores applied, plus a JSON changelog; the inputs are never written over."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from masklens.core.errors import MasklensError
from masklens.core.files.io import atomic_write_json
from masklens.core.review.corrections import (
    Correction,
    CorrectionConflict,
    changed_samples,
    changelog,
    corrected_benchmark,
    correction_conflicts,
    effective_corrections,
)


@dataclass
class Applied:
    """What :func:`apply_corrections` wrote."""

    written: list[Path]
    changelog: Path
    corrections: int
    samples: int


def store_corrections(stores: Sequence[str | os.PathLike[str]], benchmark: str, *,
                      reviewer: str | None = None) -> list[Correction]:
    """Every correction row of ``benchmark`` in the stores (each row once, by uid), effective."""
    from masklens.core.review.store import Role, open_store

    rows: dict[str, Correction] = {}
    for path in stores:
        with open_store(path, Role.READ) as st:
            for c in st.correction_history(benchmark, reviewer=reviewer):
                rows.setdefault(c.uid, c)
    return effective_corrections(sorted(rows.values(), key=lambda c: c.time))


def conflict_error(conflicts: Sequence[CorrectionConflict]) -> MasklensError:
    listed = "\n  ".join(c.describe() for c in conflicts[:10])
    more = f"\n  … and {len(conflicts) - 10} more" if len(conflicts) > 10 else ""
    return MasklensError(
        f"{len(conflicts)} instance(s) corrected differently by several reviewers:\n  {listed}{more}",
        hint="apply one reviewer's corrections (--reviewer NAME), or have one of them retract theirs")


def changelog_path(out: Path) -> Path:
    """Beside a file output (``NEW.json`` -> ``NEW.changelog.json``), inside a folder output."""
    return out.with_name(f"{out.stem}.changelog.json") if out.suffix else out / "changelog.json"


def _check_out(out: Path) -> None:
    """An existing ``out`` is only replaced when an earlier apply wrote it (its changelog is there)."""
    if not out.exists() or changelog_path(out).exists():
        return
    if out.is_dir() and not any(out.iterdir()):
        return
    raise MasklensError("already exists and was not written by `masklens review apply`", path=out,
                        field="--out", hint="choose a new output path")


def apply_corrections(
    kind: Any, files: Mapping[str, Any], stores: Sequence[str | Path], out: str | Path, *,
    reviewer: str | None = None,
) -> Applied:
    """Load the benchmark (``files``: the kind's loader arguments), apply the stores' corrections
    (one reviewer's with ``reviewer``; conflicting corrections are an error otherwise), write it
    with the kind's ``write_corrected`` at ``out`` and the changelog beside it."""
    from masklens.core.kinds.common.corrected_out import refuse_inputs
    from masklens.core.review.locations import benchmark_key

    out = Path(out)
    refuse_inputs([out, changelog_path(out)], files)
    _check_out(out)
    original = kind.load_benchmark(**files)
    key = benchmark_key(original)
    rows = store_corrections(stores, key, reviewer=reviewer)
    if not rows:
        raise MasklensError(f"no correction of benchmark {key} in {', '.join(map(str, stores))}"
                            + (f" by {reviewer}" if reviewer else ""), field="--store")
    conflicts = correction_conflicts(rows)
    if conflicts:
        raise conflict_error(conflicts)
    corrected = corrected_benchmark(original, rows)
    written = kind.write_corrected(original, corrected, out, files)
    log = changelog_path(out)
    atomic_write_json(log, {
        "benchmark": key, "kind": original.kind,
        "sources": {k: str(v) for k, v in original.sources.items()},
        "stores": [str(s) for s in stores], "reviewer": reviewer,
        "written": [str(p) for p in written],
        "corrections": changelog(original, rows),
    })
    return Applied(written, log, len(rows), len(changed_samples(rows)))


def export_review(store: Any, out: str | Path, benchmark: str) -> Path:
    """Write ``benchmark``'s current verdicts and effective corrections (masks as COCO RLE) of
    ``store`` as one JSON file, atomically (the window's File › Export verdicts/corrections…)."""
    from dataclasses import asdict, fields

    from masklens.core.review.migrations import SCHEMA_VERSION

    out = Path(out)
    if out.suffix.lower() != ".json":
        raise MasklensError("the export file must end in .json", path=out)
    corrections = []
    for c in store.corrections(benchmark):
        row = {f.name: getattr(c, f.name) for f in fields(c)}
        row["mask"] = None if c.mask is None else c.mask.to_coco()
        corrections.append(row)
    atomic_write_json(out, {
        "schema_version": SCHEMA_VERSION, "benchmark": benchmark,
        "verdicts": [asdict(v) for v in store.current(benchmark)],
        "corrections": corrections,
    })
    return out
