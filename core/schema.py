"""The one schema every loader produces and every scorer, model and panel consumes.

The mutable classes a benchmark holds several of per entry (:class:`GroundTruth`,
:class:`Sample`, :class:`Instance`, :class:`Prediction`) are slotted: no instance ``__dict__``
(~45 bytes less per object, ~4 % of a 100k-entry SA-Co scoring's memory); use
``dataclasses.replace`` / ``fields`` rather than ``vars()`` on them. The frozen ones
(:class:`ImageRef`, :class:`Prompt`) keep their ``__dict__`` (one per entry each)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from masklens.core.masks import Mask, union_all


class Role(StrEnum):
    """What a prompt is for, which fixes the ground truth it is scored against."""

    POSITIVE = "positive"  # the concept is present; scored against its target
    NEGATIVE = "negative"  # a misleading / absent concept; should be rejected
    HYPERNYM = "hypernym"  # a more general concept at level k (Prompt.level)
    MODAL = "modal"  # asks for the visible part; scored against the modal mask
    AMODAL = "amodal"  # asks for the whole object; scored against the amodal mask
    VOCABULARY = "vocabulary"  # one entry of an open vocabulary (mask-wise OVS)



@dataclass(frozen=True)
class ImageRef:
    """An image of a sample. ``path`` may be None when only scoring (no pixels needed)."""

    key: str
    path: Path | None
    height: int
    width: int
    source_id: int | str | None = None


@dataclass(slots=True)
class GroundTruth:
    """Ground-truth instances for one target (e.g. CAFE's target, a modal or amodal mask)."""

    key: str
    masks: list[Mask]
    height: int
    width: int
    label: str | None = None
    crowd: list[bool] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def union(self, *, include_crowd: bool = False) -> Mask:
        """Union of the instances (crowd instances excluded unless asked for)."""
        keep = [
            m
            for i, m in enumerate(self.masks)
            if include_crowd or not (self.crowd and self.crowd[i])
        ]
        return union_all(keep, self.height, self.width)


@dataclass(frozen=True)
class Prompt:
    """A text prompt with a role, the image it is asked on and the ground truth it is scored against.

    ``source_id`` is how the benchmark's own prediction format refers to this
    prompt (CAFE: the image id; R2SM: the query id; HalluSegBench: the folder/file).
    """

    id: str
    text: str
    role: Role
    image: str
    gt: str | None
    level: int | None = None
    source_id: int | str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Sample:
    """One unit of a benchmark: images, ground truths, prompts, and the kind's group (CAFE: its
    edit_type)."""

    id: str
    images: dict[str, ImageRef]
    gts: dict[str, GroundTruth]
    prompts: list[Prompt]
    #: the kind's group (CAFE: its edit_type); exports and reports name it as the kind's
    #: ``group_name`` (:class:`~masklens.core.scoring.contract.BenchmarkKind`)
    group: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def prompt(self, prompt_id: str) -> Prompt:
        for p in self.prompts:
            if p.id == prompt_id:
                return p
        raise KeyError(prompt_id)


@dataclass
class Benchmark:
    """A loaded benchmark: its kind, where it came from, and its samples in order."""

    kind: str
    name: str
    samples: list[Sample]
    sources: dict[str, Path] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    @property
    def title(self) -> str:
        """How the benchmark calls itself (its file's description; reports title themselves with
        it), else its name."""
        return str(self.meta.get("title") or self.name)

    def __repr__(self) -> str:  # the dataclass's would print every sample and mask
        """A short summary, one fact a line (as FiftyOne's datasets print): name, kind, samples
        and prompts, the samples per group, the source files."""
        groups: dict[str, int] = {}
        for s in self.samples:
            groups[s.group or "–"] = groups.get(s.group or "–", 0) + 1
        shown = ", ".join(f"{g} {n}" for g, n in list(groups.items())[:8]) + (", …" if len(groups) > 8 else "")
        sources = ", ".join(f"{k} {v}" for k, v in self.sources.items())
        return "\n".join([
            f"Benchmark {self.name!r}",
            f"  kind:     {self.kind}",
            f"  samples:  {len(self.samples)} ({sum(len(s.prompts) for s in self.samples)} prompts)",
            f"  groups:   {shown}",
            f"  sources:  {sources or '–'}",
        ])

    def sample(self, sample_id: str) -> Sample:
        if not hasattr(self, "_index"):
            self._index = {s.id: s for s in self.samples}
        return self._index[sample_id]


@dataclass(slots=True)
class Instance:
    """One predicted instance: a mask at the image's size and its score."""

    mask: Mask
    score: float
    label: str | None = None
    #: the record's ``category_id`` (COCO results); SAM 3's cgF1 matching orders by it
    category: Any = None


@dataclass(slots=True)
class Prediction:
    """A model's answer to one prompt: instances, the image-level presence score, provenance."""

    prompt_id: str
    instances: list[Instance]
    presence: float | None = None
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def max_score(self) -> float:
        """Highest instance score, 0.0 when there is no instance."""
        return max((i.score for i in self.instances), default=0.0)


@dataclass
class PredictionSet:
    """Predictions keyed by prompt id. ``missing`` lists prompts with no prediction at all
    (e.g. a missing HalluSegBench PNG), which metrics skip rather than score as empty."""

    by_prompt: dict[str, Prediction] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)
    name: str = "predictions"
    provenance: dict[str, Any] = field(default_factory=dict)

    def get(self, prompt_id: str) -> Prediction | None:
        return self.by_prompt.get(prompt_id)

    def __repr__(self) -> str:  # the dataclass's would print every mask
        instances = sum(len(p.instances) for p in self.by_prompt.values())
        return (f"PredictionSet({self.name!r}, prompts={len(self.by_prompt)}, instances={instances}, "
                f"missing={len(self.missing)})")

    def add(self, prediction: Prediction) -> None:
        self.by_prompt[prediction.prompt_id] = prediction
        self.missing.discard(prediction.prompt_id)
