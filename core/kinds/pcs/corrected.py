"""SA-Co/Gold with corrected ground truth: every annotator file written again (``review apply``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from masklens.core.files.output_dirs import refuse_inputs
from masklens.core.kinds.common.coco_corrected import changed_gts, rewrite_coco
from masklens.core.schema import Benchmark, GroundTruth


def write_corrected(original: Benchmark, corrected: Benchmark, out: Path, files: Mapping[str, Any]) -> list[Path]:
    """``out`` is a folder: each annotator file (``--gt``, ground truth ``gt0``, ``gt1`` …) is
    written there under its own name, its corrected image entries' annotations replaced."""
    out = Path(out)
    sources = [Path(p) for p in files["gt"]]
    targets = [out / p.name for p in sources]
    if len({t.name for t in targets}) != len(targets):
        targets = [out / f"gt{a}_{p.name}" for a, p in enumerate(sources)]
    for target in targets:
        refuse_inputs(target, files.values())
    per_file: list[dict[Any, tuple[GroundTruth, GroundTruth]]] = [{} for _ in sources]
    for sid, key, before, after in changed_gts(original, corrected):
        image_id = corrected.sample(sid).prompts[0].source_id
        per_file[int(key[2:])][image_id] = (before, after)
    out.mkdir(parents=True, exist_ok=True)
    return [rewrite_coco(src, t, entries) for src, t, entries in zip(sources, targets, per_file, strict=True)]
