"""Reading prediction cache entries as untrusted input.

A cache may be shared (a group's folder, NFS), old, or edited: an entry is read within the same
limits as a prediction file (core/files/limits.py: the JSON size and depth, the mask size) and
its RLE counts go through the bulk check (core/files/rle_validation.py) before pycocotools ever
sees them. :func:`parse_entry` raises :class:`BadEntry` (with the reason) for anything else;
the cache then treats the entry as missing, so it is computed again and replaced.
"""

from __future__ import annotations

import json
from typing import Any

from masklens.core.errors import MasklensError
from masklens.core.files import limits
from masklens.core.files.json_depth import json_depth_exceeds
from masklens.core.files.rle_validation import rle_counts_problems


class BadEntry(ValueError):
    """A cache entry that is not what masklens writes (the message says why)."""


def parse_entry(text: str | bytes) -> Any:
    """The SegmentResult a cache entry holds, validated; :class:`BadEntry` when it is not sound."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    lim = limits.current()
    if len(raw) > lim.max_json_bytes:
        raise BadEntry(f"{len(raw)} bytes, larger than the JSON limit ({lim.max_json_bytes})")
    if json_depth_exceeds(raw, lim.max_json_depth):
        raise BadEntry(f"nested deeper than the JSON limit ({lim.max_json_depth} levels)")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise BadEntry(f"not valid JSON ({exc})") from None
    return _result(data)


def _result(data: Any) -> Any:
    from masklens.core.masks import Mask
    from masklens.core.models.base import SegmentResult

    if not isinstance(data, dict):
        raise BadEntry("not a JSON object")
    masks, scores = data.get("masks"), data.get("scores")
    if not isinstance(masks, list) or not isinstance(scores, list) or len(masks) != len(scores):
        raise BadEntry("'masks' and 'scores' must be lists of equal length")
    if not all(limits.is_finite_number(s) for s in scores):
        raise BadEntry("a score is not a finite number")
    presence = data.get("presence")
    if presence is not None and not limits.is_finite_number(presence):
        raise BadEntry("'presence' is not a finite number")
    provenance = data.get("provenance") or {}
    if not isinstance(provenance, dict):
        raise BadEntry("'provenance' is not an object")
    sizes, counts = [], []
    for i, m in enumerate(masks):
        if not isinstance(m, dict) or not isinstance(m.get("counts"), str):
            raise BadEntry(f"mask {i} is not a compressed COCO RLE")
        size = m.get("size")
        if not isinstance(size, list) or len(size) != 2:
            raise BadEntry(f"mask {i}: 'size' is not [height, width]")
        try:
            sizes.append(limits.check_mask_size(*size, field="size"))
            counts.append(m["counts"].encode("ascii"))
        except MasklensError as exc:
            raise BadEntry(f"mask {i}: {exc.detail}") from None
        except UnicodeEncodeError:
            raise BadEntry(f"mask {i}: counts are not ASCII") from None
    if len(set(sizes)) > 1:
        raise BadEntry("masks of one result differ in size")
    for i, problem in enumerate(rle_counts_problems(counts, [h * w for h, w in sizes])):
        if problem is not None:
            raise BadEntry(f"mask {i}: {problem}")
    return SegmentResult(
        masks=[Mask({"size": [h, w], "counts": c}) for (h, w), c in zip(sizes, counts, strict=True)],
        scores=[float(s) for s in scores],
        presence=None if presence is None else float(presence),
        provenance=dict(provenance),
    )
