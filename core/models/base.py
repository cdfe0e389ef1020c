"""The Segmenter interface: an image and a text prompt in, scored instance masks out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from masklens.core.masks import Mask


@dataclass
class SegmentRequest:
    """One prompt on one image. Boxes are (x0, y0, x1, y1) in pixels; points are (x, y, label)."""

    text: str
    boxes: list[tuple[float, float, float, float]] | None = None
    points: list[tuple[float, float, int]] | None = None
    role: str | None = None  # the prompt's role, for backends that use it (e.g. amodal)


@dataclass
class SegmentResult:
    """Instances (masks at the image's size), their scores, presence, and provenance."""

    masks: list[Mask]
    scores: list[float]
    presence: float | None = None
    provenance: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.masks) != len(self.scores):
            raise ValueError("one score per mask")


@dataclass(frozen=True)
class BackendInfo:
    """Static description of a backend for `masklens models` and the GUI's model selector."""

    name: str
    title: str
    default_weights: str | None
    default_score_threshold: float
    description: str = ""
    needs_weights: bool = True
    #: the pip extra whose libraries the backend needs (None: the core install suffices)
    extra: str | None = None
    #: the score threshold only drops instances (never shapes a mask), so `predict` may keep
    #: low-scored ones for the scorer (False for CLIPSeg, whose mask threshold follows it)
    threshold_only_filters: bool = True


class Segmenter(ABC):
    """A loaded model that answers text prompts on images.

    Implementations load lazily (nothing heavy in ``__init__``), cache the image
    encoding so several prompts on one image encode it once, and import torch only
    inside methods.
    """

    info: BackendInfo

    @abstractmethod
    def segment(self, image: np.ndarray, request: SegmentRequest) -> SegmentResult:
        """Segment ``image`` (H×W×3 uint8 RGB) for ``request``."""

    def segment_many(self, image: np.ndarray, requests: list[SegmentRequest]) -> list[SegmentResult]:
        """Answer several prompts on one image (default: one by one, encoding cached)."""
        return [self.segment(image, r) for r in requests]

    def provenance(self) -> dict[str, Any]:
        """Model name, checkpoint and its hash, device, dtype, thresholds."""
        return {"model": self.info.name}

    def unload(self) -> None:  # noqa: B027 - optional hook
        """Free weights and caches (called when switching models that would not fit together)."""
