"""CGEBench with corrected ground truth written back as a CGEBench annotation file (``review apply``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from masklens.core.files.output_dirs import refuse_inputs
from masklens.core.kinds.common.coco_corrected import changed_gts, rewrite_coco
from masklens.core.schema import Benchmark


def write_corrected(original: Benchmark, corrected: Benchmark, out: Path, files: Mapping[str, Any]) -> list[Path]:
    """The annotation file ``files["ann"]`` with the corrected images' annotations, at ``out``."""
    out = Path(out)
    refuse_inputs(out, files.values())
    entries = {after.meta["image_id"]: (before, after)
               for _sid, _key, before, after in changed_gts(original, corrected)}
    return [rewrite_coco(Path(files["ann"]), out, entries)]
