"""An edit of one ground-truth instance mask, at the mask's full resolution, with undo/redo.

Qt-free (numpy and cv2 only). The working mask is a numpy bool array; every operation writes
only inside its bounding box and records one :class:`Patch` (the box, the pixels before and
after), so undo/redo costs the size of the change, not of the image. A brush *stroke* (press,
moves, release) is one undo step. Operations return the changed box ``(x0, y0, x1, y1)``
(exclusive ends) or None when nothing changed, which is what the overlay re-composes.

Each undo step names the tool that made it (:data:`OPERATION_TOOLS`); :attr:`EditSession.operations`
is the log of the steps that make the working mask (an undone step leaves it, a redone one comes
back), and :attr:`EditSession.tools` the tools in the order of first use: what a correction records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from masklens.core.masks import Mask

Box = tuple[int, int, int, int]
#: how a model's proposal combines with the working mask
COMBINE_MODES = ("add", "subtract", "replace")
#: the tool each operation is logged as (the names of core.review.corrections.TOOLS)
OPERATION_TOOLS = ("brush", "eraser", "polygon", "fill", "model", "clear")


@dataclass(frozen=True)
class Patch:
    """One undo step: the pixels of ``box`` before and after, and the tool that changed them."""

    box: Box
    before: np.ndarray
    after: np.ndarray
    tool: str = ""

    @property
    def nbytes(self) -> int:
        return self.before.nbytes + self.after.nbytes


def union_box(a: Box | None, b: Box | None) -> Box | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def mask_box(mask: np.ndarray) -> Box | None:
    """The bounding box of a bool array's foreground, None when empty."""
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if not rows.size:
        return None
    return int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1


class EditSession:
    """The working copy of one instance: ``sample_id``, ``gt_key``, ``instance`` (its index in
    the ground truth, None for a new instance) and ``mask`` (H×W bool)."""

    def __init__(self, mask: np.ndarray, *, sample_id: str = "", gt_key: str = "",
                 instance: int | None = None) -> None:
        arr = np.asarray(mask)
        if arr.ndim != 2:
            raise ValueError(f"an edit needs a 2-D mask, got shape {arr.shape}")
        self.mask = np.array(arr != 0, dtype=bool)
        self.original = self.mask.copy()
        self.sample_id, self.gt_key, self.instance = sample_id, gt_key, instance
        self.undo_stack: list[Patch] = []
        self.redo_stack: list[Patch] = []
        self._stroke: list[tuple[Box, np.ndarray]] | None = None
        self._last: tuple[float, float] | None = None
        self._stroke_value = True
        self._radius = 1

    # ------------------------------------------------------------ operation log
    @property
    def operations(self) -> list[str]:
        """The tool of each undo step that makes the working mask, oldest first."""
        return [p.tool for p in self.undo_stack]

    @property
    def tools(self) -> list[str]:
        """The tools of :attr:`operations`, each once, in the order of first use."""
        return list(dict.fromkeys(self.operations))

    # ------------------------------------------------------------ state
    @property
    def shape(self) -> tuple[int, int]:
        return self.mask.shape

    @property
    def changed(self) -> bool:
        """Whether the working mask differs from the one the edit started from."""
        return not np.array_equal(self.mask, self.original)

    @property
    def area(self) -> int:
        return int(np.count_nonzero(self.mask))

    def to_mask(self) -> Mask:
        """The working mask as the one mask type (COCO RLE)."""
        return Mask.from_array(self.mask)

    def _clip(self, x0: float, y0: float, x1: float, y1: float) -> Box | None:
        h, w = self.shape
        box = (max(0, int(np.floor(x0))), max(0, int(np.floor(y0))),
               min(w, int(np.ceil(x1))), min(h, int(np.ceil(y1))))
        return box if box[2] > box[0] and box[3] > box[1] else None

    def _commit(self, box: Box, before: np.ndarray, tool: str) -> Box | None:
        x0, y0, x1, y1 = box
        after = self.mask[y0:y1, x0:x1]
        if np.array_equal(before, after):
            return None
        self.undo_stack.append(Patch(box, before, after.copy(), tool))
        self.redo_stack.clear()
        return box

    def _write(self, box: Box, new: np.ndarray | bool, tool: str) -> Box | None:
        """Replace the pixels of ``box`` with ``new`` (an array, or one value for all) as one undo
        step made by ``tool``."""
        x0, y0, x1, y1 = box
        before = self.mask[y0:y1, x0:x1].copy()
        self.mask[y0:y1, x0:x1] = new
        return self._commit(box, before, tool)

    # ------------------------------------------------------------ brush / eraser
    def begin_stroke(self, x: float, y: float, radius: float, *, erase: bool = False) -> Box | None:
        """Start a brush (or eraser) stroke of ``radius`` pixels at (x, y); one undo step until
        :meth:`end_stroke`."""
        self.end_stroke()
        self._stroke, self._radius = [], max(1, int(round(radius)))
        self._stroke_value, self._last = not erase, (x, y)
        return self._segment(x, y, x, y)

    def stroke_to(self, x: float, y: float) -> Box | None:
        """Continue the stroke to (x, y): a round-capped line from the last point."""
        if self._stroke is None or self._last is None:
            return None
        (px, py), self._last = self._last, (x, y)
        return self._segment(px, py, x, y)

    def end_stroke(self) -> Box | None:
        """Close the stroke into one undo step; returns its whole box (None if nothing changed)."""
        parts, self._stroke, self._last = self._stroke, None, None
        if not parts:
            return None
        box = parts[0][0]
        for b, _ in parts[1:]:
            box = union_box(box, b)  # type: ignore[assignment]
        x0, y0, x1, y1 = box
        before = self.mask[y0:y1, x0:x1].copy()
        for (bx0, by0, bx1, by1), old in reversed(parts):  # back to the pixels before the stroke
            before[by0 - y0:by1 - y0, bx0 - x0:bx1 - x0] = old
        return self._commit(box, before, "brush" if self._stroke_value else "eraser")

    def _segment(self, ax: float, ay: float, bx: float, by: float) -> Box | None:
        import cv2

        r = self._radius
        box = self._clip(min(ax, bx) - r - 1, min(ay, by) - r - 1, max(ax, bx) + r + 2, max(ay, by) + r + 2)
        if box is None or self._stroke is None:
            return None
        x0, y0, x1, y1 = box
        region = self.mask[y0:y1, x0:x1]
        stamp = np.zeros(region.shape, np.uint8)
        shift = 4  # sub-pixel positions (cv2 fixed point)
        pt = lambda x, y: (int(round((x - x0) * 16)), int(round((y - y0) * 16)))  # noqa: E731
        cv2.line(stamp, pt(ax, ay), pt(bx, by), 1, thickness=2 * r, lineType=cv2.LINE_8, shift=shift)
        cv2.circle(stamp, pt(bx, by), r * 16, 1, thickness=-1, lineType=cv2.LINE_8, shift=shift)
        cv2.circle(stamp, pt(ax, ay), r * 16, 1, thickness=-1, lineType=cv2.LINE_8, shift=shift)
        hit = stamp.view(bool)
        if not np.any(region[hit] != self._stroke_value):
            return None
        self._stroke.append((box, region.copy()))
        region[hit] = self._stroke_value
        return box

    # ------------------------------------------------------------ shapes
    def polygon(self, points: Sequence[tuple[float, float]], *, erase: bool = False) -> Box | None:
        """Fill (or clear) the closed polygon through ``points`` (at least three)."""
        import cv2

        if len(points) < 3:
            return None
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        box = self._clip(min(xs), min(ys), max(xs) + 1, max(ys) + 1)
        if box is None:
            return None
        x0, y0, x1, y1 = box
        stamp = np.zeros((y1 - y0, x1 - x0), np.uint8)
        pts = np.array([[round((x - x0) * 16), round((y - y0) * 16)] for x, y in points], np.int32)
        cv2.fillPoly(stamp, [pts], 1, lineType=cv2.LINE_8, shift=4)
        new = self.mask[y0:y1, x0:x1].copy()
        new[stamp.view(bool)] = not erase
        return self._write(box, new, "polygon")

    def fill_holes(self) -> Box | None:
        """Fill every background region the mask encloses (not connected to its box's border)."""
        import cv2

        box = mask_box(self.mask)
        if box is None:
            return None
        x0, y0, x1, y1 = box
        region = self.mask[y0:y1, x0:x1]
        padded = np.zeros((y1 - y0 + 2, x1 - x0 + 2), np.uint8)
        padded[1:-1, 1:-1] = region
        flood = padded.copy()
        cv2.floodFill(flood, np.zeros((flood.shape[0] + 2, flood.shape[1] + 2), np.uint8), (0, 0), 1)
        holes = flood[1:-1, 1:-1] == 0
        if not holes.any():
            return None
        return self._write(box, region | holes, "fill")

    def combine(self, proposal: np.ndarray, mode: str) -> Box | None:
        """Add the proposal to the mask, subtract it, or replace the mask with it."""
        if mode not in COMBINE_MODES:
            raise ValueError(f"mode must be one of {', '.join(COMBINE_MODES)}, got {mode!r}")
        prop = np.asarray(proposal) != 0
        if prop.shape != self.shape:
            raise ValueError(f"proposal of shape {prop.shape} for a mask of shape {self.shape}")
        box = union_box(mask_box(prop), mask_box(self.mask) if mode == "replace" else None)
        if box is None:
            return None
        x0, y0, x1, y1 = box
        cur, p = self.mask[y0:y1, x0:x1], prop[y0:y1, x0:x1]
        new = cur | p if mode == "add" else cur & ~p if mode == "subtract" else p
        return self._write(box, new, "model")

    def clear(self) -> Box | None:
        """Erase the whole mask (one undo step)."""
        box = mask_box(self.mask)
        return None if box is None else self._write(box, False, "clear")

    # ------------------------------------------------------------ undo / redo
    def undo(self) -> Box | None:
        self.end_stroke()
        if not self.undo_stack:
            return None
        p = self.undo_stack.pop()
        x0, y0, x1, y1 = p.box
        self.mask[y0:y1, x0:x1] = p.before
        self.redo_stack.append(p)
        return p.box

    def redo(self) -> Box | None:
        self.end_stroke()
        if not self.redo_stack:
            return None
        p = self.redo_stack.pop()
        x0, y0, x1, y1 = p.box
        self.mask[y0:y1, x0:x1] = p.after
        self.undo_stack.append(p)
        return p.box
