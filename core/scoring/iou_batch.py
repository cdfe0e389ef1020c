"""IoU of many small (predictions × ground truths) jobs in few pycocotools calls, exactly.

Scoring a benchmark asks :func:`~masklens.core.masks.iou_matrix` once per sample for a few
masks; at tens of thousands of samples the fixed cost of each ``maskUtils.iou`` call (list
checks, RLE objects, result array) is a large part of the time. :func:`iou_jobs` puts
``BLOCK`` jobs into one call and reads each job's own sub-matrix back: every value equals the
job's own ``iou_matrix`` call, bit for bit.

Why that is exact. ``maskUtils.iou`` (pycocotools ``rleIou``) computes, for each (dt, gt)
pair, the boxes' IoU first (``rleToBbox`` + ``bbIou``); where it is positive and the two RLEs
have the same declared (height, width) it merges the runs and returns ``i / u`` (0 when
``i = 0``), where the sizes differ it returns -1, elsewhere 0. Each job's masks are given the
declared size (h, W + k): h its true height, W the largest true width in the block, k the
job's index in the block. Within a job the sizes agree, so each pair is treated exactly as in
the job's own call; across jobs they differ, so a pair is never merged (-1 or 0, and never
read). The declared width enters ``rleToBbox`` only as the initial left edge, which every
non-empty foreground run replaces (x ≤ w - 1 < W + k), so the box of a mask with foreground
is its true box; a mask without foreground intersects nothing (IoU 0 both ways). The runs
themselves are untouched.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pycocotools import mask as mask_utils

from masklens.core.masks import Mask, iou_matrix

#: jobs per pycocotools call: the box pre-check costs (masks in block) × (ground truths in
#: block), the call's fixed cost is paid once per block
BLOCK = 16


class IouJobs:
    """IoU jobs collected one by one, computed together by :meth:`run`.

    A job is given as the RLE counts of its predictions and ground truths, all of one size
    (h, w) (the caller's promise: predictions resized to the ground truth's size, as
    ``iou_matrix`` wants them); :meth:`add_masks` checks sizes and routes a job with mixed
    sizes to its own ``iou_matrix`` call. ``values`` (after :meth:`run`; ``array`` as numpy) holds
    every job's (predictions × ground truths) IoUs row-major, job after job; ``at[j]`` is job
    j's first.
    """

    __slots__ = ("at", "total", "values", "array", "_dts", "_gts", "_sizes", "_own")

    def __init__(self) -> None:
        self.at: list[int] = []
        self.total = 0
        self.values: list[float] = []
        self.array: np.ndarray | None = None
        self._dts: list[list[bytes]] = []
        self._gts: list[list[bytes]] = []
        self._sizes: list[tuple[int, int]] = []
        self._own: dict[int, tuple[Sequence[Mask], Sequence[Mask]]] = {}

    def add(self, dts: list[bytes], gts: list[bytes], h: int, w: int) -> int:
        """A job of counts, all of size (h, w); returns its index."""
        at = self.at
        at.append(self.total)
        self.total += len(dts) * len(gts)
        self._dts.append(dts)
        self._gts.append(gts)
        self._sizes.append((h, w))
        return len(at) - 1

    def add_masks(self, preds: Sequence[Mask], gts: Sequence[Mask]) -> int:
        """A job of masks: ``iou_matrix(preds, gts)``."""
        j = self.add([m.rle["counts"] for m in preds], [m.rle["counts"] for m in gts], 0, 0)
        if preds and gts:
            size = gts[0].rle["size"]
            h, w = size[0], size[1]
            if h > 0 and w > 0 and all(
                m.rle["size"][0] == h and m.rle["size"][1] == w for m in (*preds, *gts)
            ):
                self._sizes[j] = (h, w)
            else:
                self._own[j] = (preds, gts)
        return j

    def run(self, *, as_list: bool = True) -> None:
        """Compute every job; ``as_list=False`` leaves :attr:`values` empty (only :attr:`array`)."""
        if len(self.at) == 1 and 0 not in self._own:  # one job: one plain call
            dts, gts = self._dts[0], self._gts[0]
            if dts and gts:
                h, w = self._sizes[0]
                mat = mask_utils.iou([{"size": [h, w], "counts": c} for c in dts],
                                     [{"size": [h, w], "counts": c} for c in gts], [0] * len(gts))  # fmt: skip
                self.array = np.asarray(mat, dtype=np.float64).ravel()
                self.values = self.array.tolist() if as_list else []
            return
        out = np.zeros(self.total, dtype=np.float64)
        block: list[int] = []
        for j in range(len(self.at)):
            if not (self._dts[j] and self._gts[j]):
                continue
            if j in self._own:
                out[self.at[j] : self.at[j] + len(self._dts[j]) * len(self._gts[j])] = (
                    iou_matrix(*self._own[j]).ravel()
                )
                continue
            block.append(j)
            if len(block) == BLOCK:
                self._run_block(block, out)
                block = []
        if block:
            self._run_block(block, out)
        self.array = out
        self.values = out.tolist() if as_list else []

    def _run_block(self, block: list[int], out: np.ndarray) -> None:
        sizes, dts_of, gts_of = self._sizes, self._dts, self._gts
        base = max(sizes[j][1] for j in block)  # ≥ every true width
        declared = [[sizes[j][0], base + k] for k, j in enumerate(block)]
        dts = [{"size": d, "counts": c} for d, j in zip(declared, block) for c in dts_of[j]]  # noqa: B905
        gts = [{"size": d, "counts": c} for d, j in zip(declared, block) for c in gts_of[j]]  # noqa: B905
        nr = [len(dts_of[j]) for j in block]
        nc = [len(gts_of[j]) for j in block]
        mat = np.asarray(mask_utils.iou(dts, gts, [0] * len(gts)), dtype=np.float64)
        mat = mat.reshape(len(dts), len(gts))
        if len(block) == 1:
            out[self.at[block[0]] : self.at[block[0]] + mat.size] = mat.ravel()
            return
        if all(c == 1 for c in nc):  # one ground truth per job: its column, row by row
            m = len(dts)
            vals = mat.ravel()[np.arange(m) * len(block) + np.repeat(np.arange(len(block)), nr)]
            a0 = self.at[block[0]]
            if self.at[block[-1]] + nr[-1] - a0 == m:  # the jobs' values are contiguous
                out[a0 : a0 + m] = vals
                return
            at = np.repeat([self.at[j] for j in block], nr)
            out[at + np.arange(m) - np.repeat(np.cumsum(nr) - nr, nr)] = vals
            return
        r = c = 0
        for j, a, b in zip(block, nr, nc, strict=True):
            out[self.at[j] : self.at[j] + a * b] = mat[r : r + a, c : c + b].ravel()
            r, c = r + a, c + b


def iou_jobs(jobs: Sequence[tuple[Sequence[Mask], Sequence[Mask]]]) -> np.ndarray:
    """Every job's ``iou_matrix(preds, gts).ravel()``, job after job, in few pycocotools calls."""
    batch = IouJobs()
    for preds, gts in jobs:
        batch.add_masks(preds, gts)
    batch.run()
    return np.array(batch.values, dtype=np.float64)
