"""`demo`: a weight-free baseline segmenter for the bundled demo scenes — and nothing more.

It works from the pixels only (never from annotation files): each pixel is
snapped to the demo palette, regions of one colour are closed over black texture
ink and hole-filled, and every region is described by its colour, texture
(stripes/spots and their strength), material (solid/glass/outline), context (the
background around it) and how well each shape hypothesis (circle, square,
rectangle, triangle, star) explains it. Shape hypotheses are fitted only to the
region's *free* boundary (the part not touching another object), which is also
how "the whole …, including the hidden part" is completed amodally. That pixel
analysis lives in :mod:`masklens.core.models.demo_vision` and is cached per image.

A prompt is parsed into a head (shape word, hypernym such as "shape"/"object", or
one of a few demo concepts such as "zebra" or "sun") and modifiers (colour,
texture, material, context). Unknown head words give an empty result with low
presence. Like real promptable models it takes shortcuts, on purpose: texture
concepts ("zebra", "ladybug") key on the pattern alone whatever the shape is,
context concepts ("sun", "kite") key on the background, and material modifiers
("solid …") are only half understood — so CAFE and HalluSegBench readouts of the
demo are non-trivial. Scores fall with generality (hypernyms) and small size.
Boxes and points, when given, restrict the answer to the regions they select
(a click or a box with no text returns whatever is there).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from masklens.core.cache.model_cache import EncodingCache, image_key
from masklens.core.errors import ModelError
from masklens.core.masks import Mask
from masklens.core.models.base import BackendInfo, Segmenter, SegmentRequest, SegmentResult
from masklens.core.models.demo_vision import (
    OBJECT_COLOURS,
    SHAPES,
    Region,
    analyse,
)

VERSION = "1"
INFO = BackendInfo(
    name="demo",
    title="Demo baseline (no weights)",
    default_weights=None,
    default_score_threshold=0.5,
    description=(
        "A weight-free colour/shape baseline that understands only the bundled demo scenes' "
        "vocabulary (colours, shapes, textures, materials, contexts, hypernyms, amodal phrasing). "
        "Not a real model: use it to try masklens without weights."
    ),
    needs_weights=False,
)

# ------------------------------------------------------------------ vocabulary
_SYN = {
    "disc": "circle", "disk": "circle", "ball": "circle", "round": "circle", "circular": "circle",
    "box": "square", "rectangular": "rectangle", "bar": "rectangle", "triangular": "triangle",
    "violet": "purple", "gold": "yellow", "golden": "yellow",
    "stripy": "striped", "stripes": "striped", "stripe": "striped", "spots": "spotted",
    "dotted": "spotted", "dots": "spotted", "spotty": "spotted", "glassy": "glass",
    "transparent": "glass", "crystal": "glass", "outlined": "outline", "wire": "outline",
    "hollow": "outline", "filled": "solid", "real": "solid", "opaque": "solid", "painted": "solid",
    "something": "thing", "anything": "thing", "everything": "thing",
    "lawn": "grass", "meadow": "grass", "ground": "grass", "heaven": "sky",
}
_HYPERNYMS = {"shape": 0.74, "figure": 0.72, "object": 0.55, "item": 0.53, "thing": 0.5}
#: concept -> (texture, colours) for texture concepts; (shape, colours, context) for context ones
_TEXTURE_CONCEPTS = {
    "zebra": ("stripes", {"white"}), "tiger": ("stripes", {"orange"}),
    "watermelon": ("stripes", {"green"}), "bee": ("stripes", {"yellow"}),
    "ladybug": ("spots", {"red"}), "dalmatian": ("spots", {"white"}),
    "leopard": ("spots", {"yellow", "orange"}),
}
_CONTEXT_CONCEPTS = {
    "sun": ("circle", {"yellow", "orange"}, "sky"), "moon": ("circle", {"white"}, "sky"),
    "bush": ("circle", {"green"}, "grass"), "kite": ("triangle", set(OBJECT_COLOURS), "sky"),
    "ring": ("circle", set(OBJECT_COLOURS), None),
}
_STOP = {
    "the", "a", "an", "of", "part", "parts", "visible", "whole", "entire", "complete", "full",
    "including", "include", "includes", "hidden", "occluded", "behind", "only", "its", "it", "that",
    "is", "are", "which", "all", "and", "with", "in", "on", "at", "this", "one", "ones", "any",
    "every", "portion", "region", "area", "piece", "modal", "amodal", "unoccluded", "seen",
    "covered", "too", "also", "even", "you", "we", "can", "could", "see", "sees", "show",
    "shown", "showing", "out", "from", "view",
}
_AMODAL_CUES = {"whole", "entire", "complete", "hidden", "occluded", "amodal", "covered"}
_MODAL_CUES = {"visible", "modal", "unoccluded", "seen", "see", "sees", "shown", "showing"}


@dataclass
class Query:
    """A parsed prompt."""

    head: str | None  # a shape, hypernym, concept, "polygon", "stuff" (background), or None
    colours: set[str] = field(default_factory=set)
    texture: str | None = None
    material: str | None = None
    context: str | None = None
    shape_mod: str | None = None  # e.g. "round" in "round shape"
    unknown: int = 0
    amodal: bool = False


_NOUNS = {*SHAPES, *_HYPERNYMS, *_TEXTURE_CONCEPTS, *_CONTEXT_CONCEPTS, "polygon"}


def _norm(word: str) -> str:
    """Synonyms and plurals to the vocabulary's own words."""
    w = _SYN.get(word, word)
    if w not in _NOUNS and w.endswith("s") and _SYN.get(w[:-1], w[:-1]) in _NOUNS:
        w = _SYN.get(w[:-1], w[:-1])
    return w


def parse_prompt(text: str, role: str | None = None) -> Query:
    """Parse demo-vocabulary text into a :class:`Query` (head noun = the last known noun)."""
    words = re.findall(r"[a-z]+", text.lower())
    q = Query(head=None)
    cues = set(words)
    q.amodal = role == "amodal" or (role != "modal" and bool(cues & _AMODAL_CUES)
                                    and not cues & _MODAL_CUES)
    for raw in words:
        if raw in _STOP:
            continue
        w = _norm(raw)
        if raw in ("round", "circular") and q.head is None:
            q.shape_mod = "circle"
        elif w in OBJECT_COLOURS:
            q.colours.add(w)
        elif w in ("striped", "spotted"):
            q.texture = "stripes" if w == "striped" else "spots"
        elif w == "plain":
            q.texture = "none"
        elif w in ("glass", "outline", "solid"):
            q.material = w
        elif w in ("sky", "grass"):
            q.context = w
        elif w in _NOUNS:
            if q.head in _NOUNS and w in _HYPERNYMS:
                continue  # "circle shape": keep the more specific head
            q.head = w
        else:
            q.unknown += 1
    if q.head is None and q.context and not (q.colours or q.texture or q.material):
        q.head = "stuff"  # "sky", "the grass": the background itself
    if q.head is None and q.shape_mod:
        q.head, q.shape_mod = q.shape_mod, None
    if q.head is None and (q.colours or q.texture or q.material) and not q.unknown:
        q.head = "thing"  # "something red"
    return q


# ------------------------------------------------------------------ scoring
def _region_score(r: Region, q: Query) -> tuple[float, str | None]:
    """Score of region ``r`` for query ``q`` and the shape to complete amodally."""
    shape: str | None = None
    if r.stuff or q.head == "stuff":  # backgrounds answer only background prompts
        if not (r.stuff and q.head == "stuff" and r.colour == q.context):
            return 0.0, None
        return 0.9 * 0.75**q.unknown, None
    if q.head in SHAPES:
        shape, s = q.head, r.shape_score(q.head)
    elif q.head == "polygon":
        shape = max(("square", "rectangle", "triangle", "star"), key=r.shape_score)
        s = 0.8 * r.shape_score(shape)
    elif q.head in _HYPERNYMS:
        s = _HYPERNYMS[q.head]
    elif q.head in _TEXTURE_CONCEPTS:  # keys on the pattern, whatever the shape
        tex, cols = _TEXTURE_CONCEPTS[q.head]
        s = (0.3 + 0.7 * r.texture_strength) if r.texture == tex else 0.05
        s *= 1.0 if r.colour in cols else 0.3
    elif q.head in _CONTEXT_CONCEPTS:  # keys on shape, colour and surroundings
        shape, cols, ctx = _CONTEXT_CONCEPTS[q.head]
        s = r.shape_score(shape) * (1.0 if r.colour in cols else 0.05)
        s *= 0.35 + 0.65 * r.context[ctx] if ctx else (1.0 if r.material == "outline" else 0.4)
    else:
        return 0.0, None
    if q.shape_mod:
        s *= r.shape_score(q.shape_mod)
    if q.colours:
        s *= 1.0 if r.colour in q.colours else 0.04
    if q.texture:
        if q.texture == "none":
            s *= 1.0 if r.texture == "none" else 0.3
        else:
            s *= (0.55 + 0.45 * r.texture_strength) if r.texture == q.texture else 0.1
    if q.material:
        if q.material == "solid":  # only half understood: glass still passes as "solid"
            s *= {"solid": 1.0, "glass": 0.58, "outline": 0.35}[r.material]
        else:
            s *= 1.0 if r.material == q.material else 0.12
    if q.context:
        s *= 0.3 + 0.7 * r.context[q.context]
    s *= 0.75**q.unknown * (0.86 + 0.14 * min(1.0, r.area / 4000.0))
    return float(np.clip(s, 0.0, 0.99)), shape


def _selected(r: Region, request: SegmentRequest) -> bool:
    """Whether region ``r`` is picked by the request's boxes (x0, y0, x1, y1: at least half of
    the region inside one) or points (x, y, label: a positive point on it, no negative one)."""
    y0, _, x0, _ = r.roi
    ys, xs = np.nonzero(r.mask)
    xs, ys = xs + x0, ys + y0
    for bx0, by0, bx1, by1 in request.boxes or []:
        inside = (xs >= bx0) & (xs <= bx1) & (ys >= by0) & (ys <= by1)
        if inside.mean() >= 0.5:
            return True
    hit = {label: False for label in (0, 1)}
    for px, py, label in request.points or []:
        ly, lx = int(round(py)) - y0, int(round(px)) - x0
        on = 0 <= ly < r.mask.shape[0] and 0 <= lx < r.mask.shape[1] and bool(r.mask[ly, lx])
        hit[1 if label else 0] |= on
    return hit[1] and not hit[0]


class DemoSegmenter(Segmenter):
    """The demo baseline; caches the analysis of recently seen images."""

    info = INFO

    def __init__(self, *, score_threshold: float | None = None, max_instances: int = 8,
                 cache_size: int = 8, device: str | None = None) -> None:
        t = INFO.default_score_threshold if score_threshold is None else float(score_threshold)
        if not 0.0 <= t <= 1.0:
            raise ModelError(f"demo: score threshold {t} is outside [0, 1]")
        if device not in (None, "auto", "cpu"):
            raise ModelError(f"the demo model runs on the CPU only, not on '{device}'",
                             hint="drop --device or use --device cpu")
        self.score_threshold = t
        self.max_instances = max_instances
        # the analyses are small: each entry counts 1, so the cache holds ``cache_size`` images
        self._cache = EncodingCache(cache_size)
        self.analyses = 0  # how many images were analysed (the "encoder" runs)

    def _regions(self, image: np.ndarray) -> list[Region]:
        def compute() -> list[Region]:
            self.analyses += 1
            return analyse(image)

        return self._cache.get_or_compute(image_key(image), compute, lambda _: 1)

    def segment(self, image: np.ndarray, request: SegmentRequest) -> SegmentResult:
        start = time.perf_counter()
        img = np.asarray(image)
        if img.ndim == 2:
            img = np.repeat(img[:, :, None], 3, axis=2)
        img = img[:, :, :3]
        q = parse_prompt(request.text, request.role)
        geometric = bool(request.boxes or request.points)
        if q.head is None and geometric and not request.text.strip():
            q.head = "figure"  # a click or a box alone: whatever is there
        scored: list[tuple[float, Region, str | None]] = []
        if q.head is not None:
            for r in self._regions(img):
                if geometric and not _selected(r, request):
                    continue
                s, shape = _region_score(r, q)
                if s > 0.0:
                    scored.append((round(s, 4), r, shape))
        scored.sort(key=lambda t: (-t[0], t[1].roi))
        best = scored[0][0] if scored else (0.02 if q.head is None else 0.05)
        scored = [t for t in scored if t[0] >= self.score_threshold][: self.max_instances]
        masks, scores = [], []
        for s, r, shape in scored:
            local = r.fits[shape or r.best_shape][1] if q.amodal and not r.stuff else r.mask
            masks.append(Mask.from_array(r.full(local, img.shape[:2])))
            scores.append(s)
        presence = best  # image-level: the best candidate, whether or not it passed the threshold
        prov = self.provenance()
        prov.update(latency_ms=round(1000 * (time.perf_counter() - start), 2),
                    parsed_head=q.head, amodal=q.amodal)
        return SegmentResult(masks, scores, presence=presence, provenance=prov)

    def provenance(self) -> dict[str, Any]:
        return {"model": "demo", "version": VERSION, "checkpoint": None, "device": "cpu",
                "score_threshold": self.score_threshold}

    def unload(self) -> None:
        self._cache.clear()


def create(**options: Any) -> Segmenter:
    """The demo segmenter (no weights). Options: ``score_threshold`` (keep instances scored
    ≥ it; default 0.5), ``max_instances`` (8), ``cache_size`` (images, 8), ``device`` (cpu)."""
    known = {"score_threshold", "max_instances", "cache_size", "device"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ModelError(f"demo: unknown option(s) {', '.join(unknown)}",
                         hint=f"known options: {', '.join(sorted(known))}")
    return DemoSegmenter(**options)
