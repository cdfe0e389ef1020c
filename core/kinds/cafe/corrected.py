"""CAFE with corrected ground truth written back as a CAFE annotation file (``review apply``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from masklens.core.errors import MasklensError
from masklens.core.files.output_dirs import refuse_inputs
from masklens.core.kinds.common.coco_corrected import changed_gts, rewrite_coco
from masklens.core.schema import Benchmark, GroundTruth


def write_corrected(original: Benchmark, corrected: Benchmark, out: Path, files: Mapping[str, Any]) -> list[Path]:
    """The annotation file ``files["ann"]`` with the corrected image entries' annotations, at
    ``out``. The target is the positive entry's first instance (as loaded), so only the
    entries' annotations are rewritten; an image entry two pairs share must be corrected alike."""
    out = Path(out)
    refuse_inputs(out, files.values())
    entries: dict[Any, tuple[GroundTruth, GroundTruth]] = {}
    for sid, key, before, after in changed_gts(original, corrected):
        if key not in ("pos_entry", "neg_entry"):
            continue
        prompt = next(p for p in corrected.sample(sid).prompts if p.meta.get("entry_gt") == key)
        image_id = prompt.source_id
        if image_id in entries and entries[image_id][1].masks != after.masks:
            raise MasklensError(f"image id {image_id!r} is corrected differently in two pairs",
                                record=f"sample {sid}", field=key,
                                hint="correct the image entry the same way in every pair")
        entries[image_id] = (before, after)
    return [rewrite_coco(Path(files["ann"]), out, entries)]
