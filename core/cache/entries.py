"""What a prediction cache entry is: its key, the JSON it is kept as, and how it is read back.

- :class:`PredictionKey` — what a cached prediction depends on (backend, checkpoint identity,
  image content hash, prompt text, role, parameters).
- :func:`result_to_json` / :func:`result_json_text` — a SegmentResult as the JSON written;
  :func:`result_from_json` reads back what masklens wrote (trusted, not re-validated).
- :func:`parse_entry` / :func:`parse_entries` — a stored entry read as untrusted input. A cache
  may be shared (a group's folder, NFS), old, or edited: an entry is read within the same
  limits as a prediction file (core/files/limits.py: the JSON size and depth, the mask size)
  and its RLE counts go through the bulk check (core/files/rle_validation.py) before
  pycocotools ever sees them. Anything else is a :class:`BadEntry` (with the reason); the
  cache then treats the entry as missing, so it is computed again and replaced.

The store itself is :class:`masklens.core.cache.predictions.PredictionCache`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from masklens.core.errors import MasklensError
from masklens.core.files import limits

if TYPE_CHECKING:
    from masklens.core.models.base import SegmentRequest, SegmentResult


# ---------------------------------------------------------------- the key and the stored form
def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class PredictionKey:
    """What a cached prediction depends on. ``params`` is canonical JSON."""

    backend: str
    checkpoint: str
    image: str
    prompt: str
    role: str = ""
    params: str = "{}"

    @classmethod
    def make(
        cls,
        backend: str,
        checkpoint: str | None,
        image: str,
        prompt: str,
        role: str | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> PredictionKey:
        return cls(backend, checkpoint or "", image, prompt, role or "", _canonical(dict(params or {})))

    @classmethod
    def for_request(
        cls,
        backend: str,
        checkpoint: str | None,
        image: str,
        request: SegmentRequest,
        params: Mapping[str, Any] | None = None,
    ) -> PredictionKey:
        """Key for a :class:`SegmentRequest` (its boxes/points join the parameters)."""
        p = dict(params or {})
        if request.boxes:
            p["_boxes"] = [list(map(float, b)) for b in request.boxes]
        if request.points:
            p["_points"] = [list(map(float, q)) for q in request.points]
        return cls.make(backend, checkpoint, image, request.text, request.role, p)

    @property
    def digest(self) -> str:
        h = hashlib.blake2b(digest_size=20)
        for part in (self.backend, self.checkpoint, self.image, self.prompt, self.role, self.params):
            h.update(part.encode("utf-8"))
            h.update(b"\x00")
        return h.hexdigest()


_FORMAT = 1


def result_to_json(result: SegmentResult) -> dict[str, Any]:
    """A SegmentResult as JSON-ready data (masks as compressed RLE strings)."""
    from masklens.core.files.io import json_safe

    return {
        "v": _FORMAT,
        "masks": [m.to_coco() for m in result.masks],
        "scores": [float(s) for s in result.scores],
        "presence": None if result.presence is None else float(result.presence),
        "provenance": json_safe(result.provenance),
    }


def result_json_text(result: SegmentResult) -> str:
    """``json.dumps(result_to_json(result))`` (compact, no NaN), the same text, made a mask at a
    time: ``json.dumps`` holds the GIL for a whole call, ~50 ms for 100 masks of an 1800×1200 image
    (11 MB of RLE), and a window drawing beside the prompt job that writes it waits for that."""
    data = result_to_json(result)

    def dumps(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), allow_nan=False)

    masks = ",".join(dumps(m) for m in data.pop("masks"))
    rest = ",".join(f"{dumps(k)}:{dumps(v)}" for k, v in data.items() if k != "v")
    return f'{{"v":{dumps(data["v"])},"masks":[{masks}],{rest}}}'


def result_from_json(data: Mapping[str, Any]) -> SegmentResult:
    from masklens.core.masks import Mask
    from masklens.core.models.base import SegmentResult

    masks = []
    for m in data["masks"]:  # written by result_to_json: trusted, no re-validation
        h, w = (int(v) for v in m["size"])
        masks.append(Mask({"size": [h, w], "counts": m["counts"].encode("ascii")}))
    return SegmentResult(
        masks=masks,
        scores=[float(s) for s in data["scores"]],
        presence=data.get("presence"),
        provenance=dict(data.get("provenance") or {}),
    )


# ---------------------------------------------------------------- reading entries back
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
    from masklens.core.files.rle_validation import (
        rle_counts_problems,  # numpy: imported on first read
    )
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
    from masklens.core.files.json_depth import scan_parsed

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
