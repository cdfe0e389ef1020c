"""Procedural scene drawing for the bundled demo benchmark (shared by the demo generators).

A scene is a background (``plain``, ``sky``, ``grass`` or ``horizon`` = sky over
grass) and a list of flat-coloured shapes drawn in order (later shapes occlude
earlier ones). Every pixel is drawn without anti-aliasing, so the colours are
exactly those of :mod:`masklens.core.models.demo`'s palette, and every shape's
complete (amodal) and visible (modal) mask is known exactly.

Shapes carry a texture (``stripes``/``spots`` in black ink, with a density) and a
material (``solid``; ``glass`` = tinted interior with a coloured rim; ``outline``
= a coloured rim only). A shape's ground-truth mask is always its full filled
silhouette, whatever its material, as CAFE keeps the target mask through edits.

This module is a generator helper, not part of the installed package; it is run
from ``tools/demo/make_demo.py``. The palette is imported from the demo segmenter
so that the drawing and the model agree on one definition.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from masklens.core.models.demo_vision import BACKGROUNDS, GLASS, INK, OBJECT_COLOURS

SHAPES = ("circle", "square", "rectangle", "triangle", "star")


@dataclass(frozen=True)
class Shape:
    """One shape: kind, colour, centre, size (radius-like, pixels), texture and material."""

    kind: str
    colour: str
    cx: float
    cy: float
    size: float
    texture: str = "none"  # none | stripes | spots
    density: float = 1.0  # 1.0 = dense pattern, ~0.3 = sparse
    material: str = "solid"  # solid | glass | outline
    aspect: float = 1.6  # rectangles only: width / height

    def moved(self, **changes: object) -> Shape:
        return replace(self, **changes)  # type: ignore[arg-type]


@dataclass
class Scene:
    """A background and shapes in drawing order; ``height`` × ``width`` pixels."""

    height: int
    width: int
    background: str = "plain"
    shapes: list[Shape] = field(default_factory=list)
    horizon: float = 0.6  # fraction of the height that is sky in a "horizon" scene


# ------------------------------------------------------------------ geometry
def _polygon(shape: Shape) -> np.ndarray | None:
    """Vertices (N×2 int32) of polygonal shapes; None for circles."""
    cx, cy, r = shape.cx, shape.cy, shape.size
    if shape.kind == "square":
        pts = [(cx - r, cy - r), (cx + r, cy - r), (cx + r, cy + r), (cx - r, cy + r)]
    elif shape.kind == "rectangle":
        w = r * np.sqrt(shape.aspect)
        h = r / np.sqrt(shape.aspect)
        pts = [(cx - w, cy - h), (cx + w, cy - h), (cx + w, cy + h), (cx - w, cy + h)]
    elif shape.kind == "triangle":
        angles = np.deg2rad([-90.0, 30.0, 150.0])
        pts = [(cx + r * 1.15 * np.cos(a), cy + r * 1.15 * np.sin(a) + 0.15 * r) for a in angles]
    elif shape.kind == "star":
        pts = []
        for k in range(10):
            a = np.deg2rad(-90.0 + 36.0 * k)
            rad = r * 1.15 if k % 2 == 0 else r * 0.5
            pts.append((cx + rad * np.cos(a), cy + rad * np.sin(a)))
    elif shape.kind == "circle":
        return None
    else:
        raise ValueError(f"unknown shape kind {shape.kind!r}")
    return np.round(np.array(pts)).astype(np.int32)


def shape_mask(shape: Shape, height: int, width: int) -> np.ndarray:
    """The complete filled silhouette of ``shape`` (bool H×W), clipped to the image."""
    canvas = np.zeros((height, width), np.uint8)
    poly = _polygon(shape)
    if poly is None:
        cv2.circle(canvas, (round(shape.cx), round(shape.cy)), round(shape.size), 1, -1, cv2.LINE_8)
    else:
        cv2.fillPoly(canvas, [poly], 1, cv2.LINE_8)
    return canvas.astype(bool)


def _rim(mask: np.ndarray, thickness: int) -> np.ndarray:
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * thickness + 1, 2 * thickness + 1))
    inner = cv2.erode(mask.astype(np.uint8), kernel, borderValue=0).astype(bool)
    return mask & ~inner


def _texture(shape: Shape, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Ink pixels of the shape's texture (subset of ``mask``)."""
    h, w = mask.shape
    if shape.texture == "none":
        return np.zeros_like(mask)
    yy, xx = np.mgrid[0:h, 0:w]
    if shape.texture == "stripes":
        period = int(round(9 / max(shape.density, 0.1)))
        diag = (xx + yy) % period  # 45° stripes
        return mask & (diag < 4)
    if shape.texture == "spots":
        ink = np.zeros((h, w), np.uint8)
        inner = cv2.erode(mask.astype(np.uint8), np.ones((9, 9), np.uint8)).astype(bool)
        step = int(round(13 / max(shape.density, 0.1)))
        x0, y0 = int(shape.cx - shape.size), int(shape.cy - shape.size)
        for gy in range(y0, int(shape.cy + shape.size) + 1, step):
            for gx in range(x0, int(shape.cx + shape.size) + 1, step):
                jx, jy = rng.integers(-2, 3, size=2)
                px, py = gx + int(jx), gy + int(jy)
                if 0 <= px < w and 0 <= py < h and inner[py, px]:
                    cv2.circle(ink, (px, py), 3, 1, -1, cv2.LINE_8)
        return mask & ink.astype(bool)
    raise ValueError(f"unknown texture {shape.texture!r}")


def _background(scene: Scene) -> np.ndarray:
    img = np.empty((scene.height, scene.width, 3), np.uint8)
    if scene.background == "horizon":
        split = int(round(scene.height * scene.horizon))
        img[:split] = BACKGROUNDS["sky"]
        img[split:] = BACKGROUNDS["grass"]
    else:
        img[:] = BACKGROUNDS[scene.background]
    return img


# ------------------------------------------------------------------ rendering
@dataclass
class Rendered:
    """An RGB image with each shape's amodal (complete) and modal (visible) mask."""

    image: np.ndarray
    amodal: list[np.ndarray]
    modal: list[np.ndarray]


def render(scene: Scene, seed: int = 0) -> Rendered:
    """Draw ``scene`` (deterministic for a given seed); masks are exact."""
    rng = np.random.default_rng(seed)
    img = _background(scene)
    amodal = [shape_mask(s, scene.height, scene.width) for s in scene.shapes]
    for shape, mask in zip(scene.shapes, amodal, strict=True):
        colour = np.array(OBJECT_COLOURS[shape.colour], np.uint8)
        if shape.material == "solid":
            img[mask] = colour
        elif shape.material == "glass":
            img[mask] = np.array(GLASS, np.uint8)
            img[_rim(mask, 3)] = colour
        elif shape.material == "outline":
            img[_rim(mask, 4)] = colour
        else:
            raise ValueError(f"unknown material {shape.material!r}")
        ink = _texture(shape, mask, rng)
        if shape.material != "solid":
            ink &= ~_rim(mask, 4)
        img[ink] = np.array(INK, np.uint8)
    modal = []
    for i, mask in enumerate(amodal):
        above = np.zeros_like(mask)
        for later in amodal[i + 1 :]:
            above |= later
        modal.append(mask & ~above)
    return Rendered(img, amodal, modal)


def save_png(path: str, image: np.ndarray) -> None:
    """Write an RGB or binary image as PNG (cv2: deterministic bytes)."""
    arr = image
    if arr.ndim == 3:
        arr = cv2.cvtColor(arr, cv2.COLOR_RGB2BGR)
    elif arr.dtype == bool:
        arr = arr.astype(np.uint8) * 255
    ok, buf = cv2.imencode(".png", arr, [cv2.IMWRITE_PNG_COMPRESSION, 9])
    if not ok:
        raise RuntimeError(f"cannot encode {path}")
    with open(path, "wb") as f:
        f.write(buf.tobytes())


def place(rng: np.random.Generator, scene: Scene, size: float, *, avoid: list[Shape],
          margin: float = 12.0, region: tuple[float, float, float, float] | None = None,
          tries: int = 200) -> tuple[float, float]:
    """A centre for a shape of ``size`` that keeps ``margin`` px away from ``avoid`` shapes.

    ``region`` = (x0, y0, x1, y1) fractions of the image where the centre may fall.
    """
    x0, y0, x1, y1 = region or (0.0, 0.0, 1.0, 1.0)
    lo_x = max(size * 1.2 + 4, x0 * scene.width)
    hi_x = min(scene.width - size * 1.2 - 4, x1 * scene.width)
    lo_y = max(size * 1.2 + 4, y0 * scene.height)
    hi_y = min(scene.height - size * 1.2 - 4, y1 * scene.height)
    best = ((lo_x + hi_x) / 2, (lo_y + hi_y) / 2)
    best_gap = -np.inf
    for _ in range(tries):
        cx = float(rng.uniform(lo_x, max(lo_x, hi_x)))
        cy = float(rng.uniform(lo_y, max(lo_y, hi_y)))
        gap = min(
            (np.hypot(cx - o.cx, cy - o.cy) - 1.25 * (size + o.size) for o in avoid),
            default=np.inf,
        )
        if gap >= margin:
            return round(cx, 1), round(cy, 1)
        if gap > best_gap:
            best, best_gap = (round(cx, 1), round(cy, 1)), gap
    return best
