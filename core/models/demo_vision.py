"""Pixel analysis for the `demo` segmenter: palette snapping, regions and shape fits.

Every pixel of a demo image is snapped to the demo palette; per object colour,
regions are closed over black texture ink and hole-filled (so striped, spotted,
glass and wire-outline shapes become one silhouette). Each connected region is
described by colour, texture, material, context (the surrounding background)
and, for each shape hypothesis, how well it explains the visible pixels without
covering visible background (``q``) together with the completed (amodal) mask.
Shapes are fitted to the region's *free* outline — the part not touching
another object — which is what lets the model complete occluded shapes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: RGB colours of the demo world (shared with tools/demo/demo_scenes.py).
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
SHAPES = ("circle", "square", "rectangle", "triangle", "star")


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
    stuff: bool = False  # a background ("sky", "grass", "plain"), not an object

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
        return max(SHAPES, key=lambda s: self.fits[s][0])


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
    for bi, name in enumerate(BACKGROUNDS):  # backgrounds are "stuff" regions
        mask = labels == _N_OBJ + bi
        area = int(counts[_N_OBJ + bi])
        if area >= 200:
            regions.append(Region(name, (0, hh, 0, ww), mask, area, "none", 0.0, "solid", {}, {},
                                  stuff=True))
    return regions


def _describe(colour: str, roi: tuple[int, int, int, int], comp: np.ndarray, loc: np.ndarray,
              occ: np.ndarray, area: int) -> Region:
    import cv2

    inkp = (loc == _INK) & comp
    ink_frac = np.count_nonzero(inkp) / area
    rim = comp & ~cv2.erode(comp.astype(np.uint8), np.ones((7, 7), np.uint8)).astype(bool)
    ink_on_rim = np.count_nonzero(inkp & rim) / max(int(np.count_nonzero(rim)), 1)
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
