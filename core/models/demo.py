"""`demo`: a weight-free baseline segmenter for the bundled demo scenes — and nothing more.

It works from the pixels only (never from annotation files): each pixel is
snapped to the demo palette, regions of one colour are closed over black texture
ink and hole-filled, and every region is described by its colour, texture
(stripes/spots and their strength), material (solid/glass/outline), context (the
background around it) and how well each shape hypothesis (circle, square,
rectangle, triangle, star) explains it. Shape hypotheses are fitted only to the
region's *free* boundary (the part not touching another object), which is also
how "the whole …, including the hidden part" is completed amodally.

A prompt is parsed into a head (shape word, hypernym such as "shape"/"object", or
one of a few demo concepts such as "zebra" or "sun") and modifiers (colour,
texture, material, context). Unknown head words give an empty result with low
presence. Like real promptable models it takes shortcuts, on purpose: texture
concepts ("zebra", "ladybug") key on the pattern alone whatever the shape is,
context concepts ("sun", "kite") key on the background, and material modifiers
("solid …") are only half understood — so CAFE and HalluSegBench readouts of the
demo are non-trivial. Scores fall with generality (hypernyms) and small size.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from masklens.core.errors import ModelError
from masklens.core.masks import Mask
from masklens.core.models.base import BackendInfo, Segmenter, SegmentRequest, SegmentResult

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

#: RGB colours of the demo world (shared with packaging/demo_scenes.py).
OBJECT_COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (215, 45, 45), "orange": (240, 130, 30), "yellow": (245, 205, 35),
    "green": (40, 150, 70), "blue": (45, 85, 210), "purple": (135, 65, 175),
    "white": (252, 252, 252),
}
BACKGROUNDS: dict[str, tuple[int, int, int]] = {
    "plain": (228, 228, 222), "sky": (160, 205, 240), "grass": (140, 195, 110),
}
INK = (25, 25, 25)
GLASS = (200, 240, 250)
_PALETTE = np.array([*OBJECT_COLOURS.values(), *BACKGROUNDS.values(), INK, GLASS], np.int32)
_N_OBJ, _N_BG = len(OBJECT_COLOURS), len(BACKGROUNDS)
_INK, _GLASS = _N_OBJ + _N_BG, _N_OBJ + _N_BG + 1
_SHAPES = ("circle", "square", "rectangle", "triangle", "star")

# ------------------------------------------------------------------ vocabulary
_SYN = {
    "disc": "circle", "disk": "circle", "ball": "circle", "round": "circle", "circular": "circle",
    "box": "square", "rectangular": "rectangle", "bar": "rectangle", "triangular": "triangle",
    "violet": "purple", "gold": "yellow", "golden": "yellow",
    "stripy": "striped", "stripes": "striped", "stripe": "striped", "spots": "spotted",
    "dotted": "spotted", "dots": "spotted", "spotty": "spotted", "glassy": "glass",
    "transparent": "glass", "crystal": "glass", "outlined": "outline", "wire": "outline",
    "hollow": "outline", "filled": "solid", "real": "solid", "opaque": "solid", "painted": "solid",
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
    "covered", "too", "also", "even",
}
_AMODAL_CUES = {"whole", "entire", "complete", "hidden", "occluded", "amodal", "covered"}
_MODAL_CUES = {"visible", "modal", "unoccluded", "seen"}


@dataclass
class Query:
    """A parsed prompt."""

    head: str | None  # a shape, hypernym, concept, "polygon", or None (unknown)
    colours: set[str] = field(default_factory=set)
    texture: str | None = None
    material: str | None = None
    context: str | None = None
    shape_mod: str | None = None  # e.g. "round" in "round shape"
    unknown: int = 0
    amodal: bool = False


def _norm(word: str) -> str:
    w = _SYN.get(word, word)
    known = set(_SHAPES) | set(_HYPERNYMS) | set(_TEXTURE_CONCEPTS) | set(_CONTEXT_CONCEPTS)
    if w not in known and w.endswith("s") and _SYN.get(w[:-1], w[:-1]) in known | {"polygon"}:
        w = _SYN.get(w[:-1], w[:-1])
    return w


def parse_prompt(text: str, role: str | None = None) -> Query:
    """Parse demo-vocabulary text into a :class:`Query` (head noun = the last known noun)."""
    words = re.findall(r"[a-z]+", text.lower())
    q = Query(head=None)
    cues = set(words)
    q.amodal = role == "amodal" or (role != "modal" and bool(cues & _AMODAL_CUES)
                                    and not cues & _MODAL_CUES)
    nouns = set(_SHAPES) | set(_HYPERNYMS) | set(_TEXTURE_CONCEPTS) | set(_CONTEXT_CONCEPTS)
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
        elif w == "polygon" or w in nouns:
            if q.head in nouns and w in _HYPERNYMS:
                continue  # "circle shape": keep the more specific head
            q.head = w
        else:
            q.unknown += 1
    if q.head is None and q.shape_mod:
        q.head, q.shape_mod = q.shape_mod, None
    if q.head is None and (q.colours or q.texture or q.material) and not q.unknown:
        q.head = "thing"  # "something red"
    return q


# ------------------------------------------------------------------ image analysis
@dataclass
class Region:
    """One coloured region of an image, in ROI coordinates (``roi`` = y0, y1, x0, x1)."""

    colour: str
    roi: tuple[int, int, int, int]
    mask: np.ndarray  # visible filled silhouette within the ROI
    area: int
    texture: str
    texture_strength: float
    material: str
    context: dict[str, float]
    fits: dict[str, tuple[float, np.ndarray]]  # shape -> (consistency q, completed mask)

    def full(self, local: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
        out = np.zeros(shape, bool)
        y0, y1, x0, x1 = self.roi
        out[y0:y1, x0:x1] = local
        return out

    def shape_score(self, shape: str) -> float:
        q = self.fits[shape][0]
        return float(np.clip((q - 0.8) / 0.17, 0.0, 1.0))

    @property
    def best_shape(self) -> str:
        return max(_SHAPES, key=lambda s: self.fits[s][0])


_LUT: np.ndarray | None = None


def _palette_lut() -> np.ndarray:
    """Nearest palette index for every colour quantised to 6 bits per channel (built once)."""
    global _LUT
    if _LUT is None:
        q = np.arange(64, dtype=np.int32) * 4 + 2
        r, g, b = (a.ravel() for a in np.meshgrid(q, q, q, indexing="ij"))
        best = np.full(r.shape, np.iinfo(np.int32).max, np.int32)
        lut = np.zeros(r.shape, np.uint8)
        for i, (pr, pg, pb) in enumerate(_PALETTE):
            d = (r - pr) ** 2 + (g - pg) ** 2 + (b - pb) ** 2
            closer = d < best
            best[closer], lut[closer] = d[closer], i
        _LUT = lut
    return _LUT


def palette_labels(image: np.ndarray) -> np.ndarray:
    """Index of the nearest palette colour for every pixel, through a 6-bit-per-channel lookup
    table (agrees with the exact nearest colour except at near-ties between two entries)."""
    px = np.asarray(image, dtype=np.uint8)
    code = ((px[:, :, 0].astype(np.int32) >> 2) << 12) | ((px[:, :, 1] >> 2).astype(np.int32) << 6)
    code |= px[:, :, 2] >> 2
    return _palette_lut()[code]


def _fill_holes(mask: np.ndarray, fillable: np.ndarray) -> np.ndarray:
    import cv2

    n, lab = cv2.connectedComponents((~mask).astype(np.uint8), connectivity=4)
    border = np.unique(np.concatenate([lab[0], lab[-1], lab[:, 0], lab[:, -1]]))
    bad = np.bincount(lab[~fillable & ~mask], minlength=n) > 0
    bad[border] = True
    bad[0] = True  # label 0 is the mask itself
    return mask | ~bad[lab]


def _kasa_circle(pts: np.ndarray) -> tuple[float, float, float] | None:
    x, y = pts[:, 0].astype(float), pts[:, 1].astype(float)
    a = np.stack([x, y, np.ones_like(x)], axis=1)
    sol, *_ = np.linalg.lstsq(a, -(x * x + y * y), rcond=None)
    cx, cy = -sol[0] / 2, -sol[1] / 2
    r2 = cx * cx + cy * cy - sol[2]
    return (cx, cy, float(np.sqrt(r2))) if r2 > 0 else None


def _fits(comp: np.ndarray, occ: np.ndarray) -> dict[str, tuple[float, np.ndarray]]:
    """Fit each shape hypothesis to ``comp``; q = IoU(comp, hypothesis minus occluders)."""
    import cv2

    h, w = comp.shape
    u8 = comp.astype(np.uint8)
    contours, _ = cv2.findContours(u8, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    pts = np.concatenate([c.reshape(-1, 2) for c in contours])
    near_occ = cv2.dilate(occ.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
    free = pts[~near_occ[pts[:, 1], pts[:, 0]]]
    if len(free) < 8:
        free = pts
    out: dict[str, tuple[float, np.ndarray]] = {}

    def consistency(hyp: np.ndarray) -> float:
        inter = np.count_nonzero(hyp & comp)
        union = np.count_nonzero(comp | (hyp & ~occ))
        return inter / union if union else 0.0

    circle = np.zeros((h, w), np.uint8)
    fit = _kasa_circle(free)
    if fit is None or fit[2] > 2 * max(h, w):
        (cx, cy), r = cv2.minEnclosingCircle(pts.astype(np.float32))
        fit = (cx, cy, r)
    # boundary pixels lie half a pixel inside the true outline
    cv2.circle(circle, (round(fit[0]), round(fit[1])), round(fit[2] + 0.5), 1, -1, cv2.LINE_8)
    bx, by, bw0, bh0 = cv2.boundingRect(u8)
    x0, x1, y0, y1 = bx, bx + bw0 - 1, by, by + bh0 - 1
    rect = np.zeros((h, w), bool)
    rect[y0 : y1 + 1, x0 : x1 + 1] = True
    bw, bh = x1 - x0 + 1, y1 - y0 + 1
    if bw < bh - 1:  # square prior: grow the short side towards the occluder
        grow = bh - bw
        left, right = occ[y0 : y1 + 1, max(x0 - 3, 0) : x0].sum(), occ[y0 : y1 + 1, x1 + 1 : x1 + 4].sum()
        x0, x1 = (x0 - grow, x1) if left > right else (x0, x1 + grow)
    elif bh < bw - 1:
        grow = bw - bh
        top, bottom = occ[max(y0 - 3, 0) : y0, x0 : x1 + 1].sum(), occ[y1 + 1 : y1 + 4, x0 : x1 + 1].sum()
        y0, y1 = (y0 - grow, y1) if top > bottom else (y0, y1 + grow)
    square = np.zeros((h, w), bool)
    square[max(y0, 0) : y1 + 1, max(x0, 0) : x1 + 1] = True
    tri = np.zeros((h, w), np.uint8)
    _, corners = cv2.minEnclosingTriangle(pts.reshape(-1, 1, 2).astype(np.float32))
    if corners is not None:
        cv2.fillPoly(tri, [np.round(corners.reshape(-1, 2)).astype(np.int32)], 1, cv2.LINE_8)
    for name, hyp in (("circle", circle.astype(bool)), ("square", square),
                      ("rectangle", rect), ("triangle", tri.astype(bool))):
        out[name] = (consistency(hyp), hyp)
    solidity = np.count_nonzero(comp) / max(cv2.contourArea(cv2.convexHull(pts)), 1.0)
    q_star = 0.8 + 0.17 * float(np.clip((0.75 - solidity) / 0.12, 0, 1)) if solidity < 0.75 else 0.5
    out["star"] = (q_star, comp.copy())
    return out


def analyse(image: np.ndarray) -> list[Region]:
    """All coloured regions of a demo image with their descriptors."""
    import cv2

    labels = palette_labels(image)
    hh, ww = labels.shape
    ink = labels == _INK
    background = labels >= _N_OBJ
    regions: list[Region] = []
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    counts = np.bincount(labels.ravel(), minlength=len(_PALETTE))
    for ci, colour in enumerate(OBJECT_COLOURS):
        if counts[ci] < 30:
            continue
        own_full = (labels == ci).astype(np.uint8)
        bx, by, bw_, bh_ = cv2.boundingRect(own_full)  # work on this colour's box only
        cy0, cy1, cx0, cx1 = max(by - 4, 0), min(by + bh_ + 4, hh), max(bx - 4, 0), min(bx + bw_ + 4, ww)
        own = own_full[cy0:cy1, cx0:cx1].astype(bool)
        closed = cv2.morphologyEx(own.astype(np.uint8), cv2.MORPH_CLOSE, kernel).astype(bool)
        closed &= own | ink[cy0:cy1, cx0:cx1]
        filled = _fill_holes(closed, background[cy0:cy1, cx0:cx1])
        n, lab_c, stats, _ = cv2.connectedComponentsWithStats(filled.astype(np.uint8), connectivity=8)
        lab = np.zeros((hh, ww), lab_c.dtype)
        lab[cy0:cy1, cx0:cx1] = lab_c
        stats[:, 0] += cx0
        stats[:, 1] += cy0
        for k in range(1, n):
            x, y, bw, bh, area = (int(v) for v in stats[k])
            if area < 40:
                continue
            pad = max(bw, bh) + 4
            y0, y1, x0, x1 = max(y - pad, 0), min(y + bh + pad, hh), max(x - pad, 0), min(x + bw + pad, ww)
            comp = lab[y0:y1, x0:x1] == k
            loc = labels[y0:y1, x0:x1]
            occ = ((loc < _N_OBJ) & (loc != ci)) | (((loc == _INK) | (loc == _GLASS)) & ~comp)
            regions.append(_describe(colour, (y0, y1, x0, x1), comp, loc, occ, area))
    return regions


def _describe(colour: str, roi: tuple[int, int, int, int], comp: np.ndarray, loc: np.ndarray,
              occ: np.ndarray, area: int) -> Region:
    import cv2

    inkp = (loc == _INK) & comp
    ink_frac = np.count_nonzero(inkp) / area
    rim = comp & ~cv2.erode(comp.astype(np.uint8), np.ones((7, 7), np.uint8)).astype(bool)
    ink_on_rim = np.count_nonzero(inkp & rim) / max(np.count_nonzero(rim), 1)
    if ink_frac < 0.01:
        texture, strength = "none", 0.0
    elif ink_on_rim > 0.05:
        texture, strength = "stripes", float(np.clip((ink_frac - 0.08) / 0.25, 0, 1))
    else:
        texture, strength = "spots", float(np.clip((ink_frac - 0.03) / 0.1, 0, 1))
    bg_inside = np.count_nonzero(comp & (loc >= _N_OBJ) & (loc < _INK)) / area
    glass_inside = np.count_nonzero(comp & (loc == _GLASS)) / area
    material = "outline" if bg_inside > 0.25 else "glass" if glass_inside > 0.25 else "solid"
    u8 = comp.astype(np.uint8)
    ring = cv2.dilate(u8, np.ones((21, 21), np.uint8)).astype(bool) & ~cv2.dilate(
        u8, np.ones((5, 5), np.uint8)).astype(bool)
    bg = loc[ring & (loc >= _N_OBJ) & (loc < _INK)] - _N_OBJ
    counts = np.bincount(bg, minlength=_N_BG).astype(float)
    context = dict(zip(BACKGROUNDS, (counts / max(counts.sum(), 1.0)).tolist(), strict=True))
    return Region(colour, roi, comp, area, texture, strength, material, context, _fits(comp, occ))


# ------------------------------------------------------------------ scoring
def _region_score(r: Region, q: Query) -> tuple[float, str | None]:
    """Score of region ``r`` for query ``q`` and the shape to complete amodally."""
    shape: str | None = None
    if q.head in _SHAPES:
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
        self._cache: OrderedDict[bytes, list[Region]] = OrderedDict()
        self._cache_size = cache_size
        self.analyses = 0  # how many images were analysed (the "encoder" runs)

    def _regions(self, image: np.ndarray) -> list[Region]:
        key = hashlib.blake2b(np.ascontiguousarray(image).tobytes(), digest_size=16).digest()
        key += repr(image.shape).encode()
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        regions = analyse(image)
        self.analyses += 1
        self._cache[key] = regions
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return regions

    def segment(self, image: np.ndarray, request: SegmentRequest) -> SegmentResult:
        start = time.perf_counter()
        img = np.asarray(image)
        if img.ndim == 2:
            img = np.repeat(img[:, :, None], 3, axis=2)
        img = img[:, :, :3]
        q = parse_prompt(request.text, request.role)
        scored: list[tuple[float, Region, str | None]] = []
        if q.head is not None:
            for r in self._regions(img):
                s, shape = _region_score(r, q)
                if s > 0.0:
                    scored.append((round(s, 4), r, shape))
        scored.sort(key=lambda t: (-t[0], t[1].roi))
        best = scored[0][0] if scored else (0.02 if q.head is None else 0.05)
        scored = [t for t in scored if t[0] >= self.score_threshold][: self.max_instances]
        masks, scores = [], []
        for s, r, shape in scored:
            local = r.fits[shape or r.best_shape][1] if q.amodal else r.mask
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
