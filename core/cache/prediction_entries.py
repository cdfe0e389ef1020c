"""What the prediction cache stores: the key of an entry (backend, checkpoint identity, image
content hash, prompt text, role, parameters) and a SegmentResult as the JSON it is kept as."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from masklens.core.models.base import SegmentRequest, SegmentResult


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
