"""HalluSegBench with corrected ground truth (``review apply``): a new ``data.json`` whose
corrected items point to new mask PNGs written beside, never over, the originals."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from masklens.core.errors import MasklensError
from masklens.core.files.io import atomic_write_bytes, atomic_write_json, read_json
from masklens.core.files.output_dirs import refuse_inputs
from masklens.core.kinds.common.coco_corrected import changed_gts
from masklens.core.masks import Mask
from masklens.core.schema import Benchmark


def corrected_png_name(rel: str, mask: Mask) -> str:
    """``dir/stem.corrected-<12 hex of the mask>.png`` beside the original ``dir/stem.png``."""
    digest = hashlib.sha256(repr(mask.to_coco()).encode()).hexdigest()[:12]
    p = PurePosixPath(rel)
    return str(p.with_name(f"{p.stem}.corrected-{digest}.png"))


def _png(mask: Mask) -> bytes:
    import cv2

    ok, buf = cv2.imencode(".png", mask.to_array().astype(np.uint8) * 255)
    if not ok:  # pragma: no cover - cv2 encodes any 2-D uint8 array
        raise MasklensError("cannot encode a mask PNG")
    return buf.tobytes()


def write_corrected(original: Benchmark, corrected: Benchmark, out: Path, files: Mapping[str, Any]) -> list[Path]:
    """``out``: the new data.json (read it with the same ``--root``); the new PNGs go beside the
    originals under the root. A PNG of that name already there is kept when it holds the same
    mask (an earlier apply), and is an error otherwise."""
    from masklens.core.kinds.hallusegbench.kind import FIELDS

    out = Path(out)
    refuse_inputs(out, files.values())
    root = Path(original.sources["root"])
    raw = read_json(Path(files["data"]))
    written: list[Path] = []
    for sid, key, _before, after in changed_gts(original, corrected):
        sample = corrected.sample(sid)
        item = raw[sample.meta["index"]]
        name = FIELDS[f"{key}_mask"][0 if sample.meta["schema"] == "current" else 1]
        mask = after.masks[0]
        rel = corrected_png_name(item[name], mask)
        target = root / rel
        refuse_inputs(target, files.values())
        if target.exists():
            if Mask.from_png(target, grey=True) != mask:
                raise MasklensError("a different file of this name is already there", path=target,
                                    hint="masklens never writes over a file it did not write")
        else:
            atomic_write_bytes(target, _png(mask))
            written.append(target)
        item[name] = rel
    atomic_write_json(out, raw)
    return [out, *written]
