"""Reading prediction cache entries as untrusted input.

A cache may be shared (a group's folder, NFS), old, or edited: an entry is read within the same
limits as a prediction file (core/files/limits.py: the JSON size and depth, the mask size) and
its RLE counts go through the bulk check (core/files/rle_validation.py) before pycocotools ever
sees them. :func:`parse_entry` raises :class:`BadEntry` (with the reason) for anything else;
the cache then treats the entry as missing, so it is computed again and replaced.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from masklens.core.errors import MasklensError
from masklens.core.files import limits
from masklens.core.files.json_depth import scan_parsed
from masklens.core.files.rle_validation import rle_counts_problems


class BadEntry(ValueError):
    """A cache entry that is not what masklens writes (the message says why)."""


def parse_entry(text: str | bytes) -> Any:
    """The SegmentResult a cache entry holds, validated; :class:`BadEntry` when it is not sound."""
    (result,) = parse_entries([text])
    if isinstance(result, BadEntry):
        raise result
    return result


def parse_entries(texts: Sequence[Any]) -> list[Any]:
    """Each entry's SegmentResult, or the :class:`BadEntry` saying why it is not sound. The RLE
    counts of all entries are checked in one bulk pass (its fixed cost is paid once per call:
    per mask ~5 µs in bulk, against ~170 µs alone)."""
    from masklens.core.masks import Mask
    from masklens.core.models.base import SegmentResult

    pending: list[Any] = []
    lim = limits.current()  # read once per call (it reads the environment)
    for text in texts:
        try:
            pending.append(_structure(text, lim))
        except BadEntry as exc:
            pending.append(exc)
    counts = [c for p in pending if not isinstance(p, BadEntry) for c in p[1]]
    pixels = [h * w for p in pending if not isinstance(p, BadEntry) for h, w in p[0]]
    problems = iter(rle_counts_problems(counts, pixels)) if counts else iter(())
    out: list[Any] = []
    for p in pending:
        if isinstance(p, BadEntry):
            out.append(p)
            continue
        sizes, cnts, scores, presence, provenance = p
        found = [(i, q) for i, q in enumerate(next(problems) for _ in cnts) if q is not None]
        if found:
            out.append(BadEntry(f"mask {found[0][0]}: {found[0][1]}"))
            continue
        out.append(SegmentResult(
            masks=[Mask({"size": [h, w], "counts": c}) for (h, w), c in zip(sizes, cnts, strict=True)],
            scores=[float(x) for x in scores],
            presence=None if presence is None else float(presence),
            provenance=dict(provenance),
        ))
    return out


def _json(text: Any, lim: limits.Limits) -> Any:
    if not isinstance(text, str | bytes):
        raise BadEntry(f"stored as {type(text).__name__}, not text")
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if len(raw) > lim.max_json_bytes:
        raise BadEntry(f"{len(raw)} bytes, larger than the JSON limit ({lim.max_json_bytes})")
    try:
        value = orjson.loads(raw)  # no recursion in Python; refuses more than 1024 levels itself
    except orjson.JSONDecodeError as exc:
        raise BadEntry(f"not valid JSON ({exc})") from None
    if scan_parsed(value, lim.max_json_depth)[0]:
        raise BadEntry(f"nested deeper than the JSON limit ({lim.max_json_depth} levels)")
    return value


def _structure(text: Any, lim: limits.Limits
               ) -> tuple[list[tuple[int, int]], list[bytes], list[Any], Any, dict[str, Any]]:
    """(mask sizes, RLE counts, scores, presence, provenance) of one entry, its shape checked."""
    data = _json(text, lim)
    if not isinstance(data, dict):
        raise BadEntry("not a JSON object")
    masks, scores = data.get("masks"), data.get("scores")
    if not isinstance(masks, list) or not isinstance(scores, list) or len(masks) != len(scores):
        raise BadEntry("'masks' and 'scores' must be lists of equal length")
    if not all(limits.is_finite_number(x) for x in scores):
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
        h, w = size
        try:
            if not (type(h) is int and type(w) is int and 0 <= h <= lim.max_mask_side
                    and 0 <= w <= lim.max_mask_side and h * w <= lim.max_mask_pixels):
                limits.check_mask_size(h, w, field="size")  # raises, with the message
            sizes.append((h, w))
            counts.append(m["counts"].encode("ascii"))
        except MasklensError as exc:
            raise BadEntry(f"mask {i}: {exc.detail}") from None
        except UnicodeEncodeError:
            raise BadEntry(f"mask {i}: counts are not ASCII") from None
    if len(set(sizes)) > 1:
        raise BadEntry("masks of one result differ in size")
    return sizes, counts, scores, presence, provenance
