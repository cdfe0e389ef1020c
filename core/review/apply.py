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


def changelog_path(out: Path, *, folder: bool) -> Path:
    """Inside a folder output (``corrected/changelog.json``); beside a file output:
    ``NEW.json`` -> ``NEW.changelog.json``, ``NEW`` (no suffix) -> ``NEW.changelog.json``."""
    if folder:
        return out / "changelog.json"
    return out.with_name(f"{out.stem if out.suffix else out.name}.changelog.json")


def _listed_by_changelog(out: Path) -> bool:
    """Whether the changelog beside the file ``out`` says an earlier apply wrote ``out``."""
    from masklens.core.files.io import read_json

    log = changelog_path(out, folder=False)
    try:
        data = read_json(log)
    except MasklensError:
        return False
    written = data.get("written") if isinstance(data, dict) else None
    if not isinstance(written, list):
        return False
    return any(isinstance(w, str) and Path(w).absolute() == out.absolute() for w in written)


def _check_file_targets(out: Path, inputs: Sequence[Any]) -> Path:
    """For a file output: ``out`` and its changelog are no input, ``out`` is new or written by
    an earlier apply, and the changelog is new or that apply's; returns the changelog path."""
    from masklens.core.files.output_dirs import refuse_inputs

    log = changelog_path(out, folder=False)
    for target in (out, log):
        refuse_inputs(target, inputs)
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise MasklensError("exists and is not a regular file; not writing over it",
                                path=target, field="--out", hint="choose a new output path")
    if out.exists() and not _listed_by_changelog(out):
        raise MasklensError("already exists and was not written by `masklens review apply`",
                            path=out, field="--out", hint="choose a new output path")
    if log.exists() and not (out.exists() or _listed_by_changelog(out)):
        raise MasklensError("a changelog of another output is already there; not writing over it",
                            path=log, field="--out", hint="choose a new output path")
    return log


def apply_corrections(
    kind: Any, files: Mapping[str, Any], stores: Sequence[str | Path], out: str | Path, *,
    reviewer: str | None = None,
) -> Applied:
    """Load the benchmark (``files``: the kind's loader arguments), apply the stores' corrections
    (one reviewer's with ``reviewer``; conflicting corrections are an error otherwise), write it
    with the kind's ``write_corrected`` at ``out`` and the changelog beside it (a file output)
    or inside it (a folder output).

    Nothing the run reads (the benchmark's files, the stores, their folders) is ever an output.
    The corrected benchmark is written into a staging folder first; only then are ``out`` and
    its changelog checked and put in place (the changelog first, so that an interrupted run is
    recognised as this command's and a re-run replaces it): a refused or failed run writes
    nothing."""
    import os
    import shutil

    from masklens.core.files.io import (
        atomic_write_json,
        cannot_write,
        named_after_output,
        replace_folder,
        temp_sibling_dir,
    )
    from masklens.core.files.output_dirs import check_replaceable, refuse_inputs, write_marker
    from masklens.core.review.locations import benchmark_key

    out = Path(out)
    inputs: list[Any] = [*files.values(), *stores]
    refuse_inputs(out, inputs)
    checked = None
    if out.is_dir() and not out.is_symlink():
        checked = check_replaceable(out, inputs=inputs)
    elif out.exists() or out.is_symlink():
        _check_file_targets(out, inputs)
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
    tmp = temp_sibling_dir(out)
    try:
        staged = tmp / out.name
        written = [out / Path(p).relative_to(staged) if Path(p).is_relative_to(staged) else Path(p)
                   for p in kind.write_corrected(original, corrected, staged, files)]
        folder = staged.is_dir()
        record = {
            "benchmark": key, "kind": original.kind,
            "sources": {k: str(v) for k, v in original.sources.items()},
            "stores": [str(s) for s in stores], "reviewer": reviewer,
            "written": [str(p) for p in written],
            "corrections": changelog(original, rows),
        }
        if folder:
            log = changelog_path(out, folder=True)
            atomic_write_json(changelog_path(staged, folder=True), record)
            write_marker(staged, "review apply")
            check_replaceable(out, inputs=inputs, since=checked)
            replace_folder(staged, out)
        else:
            log = _check_file_targets(out, inputs)
            atomic_write_json(log, record)
            os.replace(staged, out)
    except MasklensError as exc:  # named after the output asked for, not the staging folder
        raise named_after_output(exc, tmp, out) from None
    except OSError as exc:
        raise cannot_write(out, exc) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
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
