"""One mask type for all of masklens: COCO RLE first (pycocotools), decoded lazily.

Accepted inputs: compressed RLE (counts as ``str`` or ``bytes``), uncompressed RLE
(counts as a list of ints), COCO polygons, binary arrays and PNG files (any
non-zero pixel is foreground). Area, intersection, union and IoU are computed on
the RLE without decoding. A prediction whose size differs from the ground
truth's is resized with nearest neighbour (see :func:`resize_nearest`).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pycocotools import mask as mask_utils

from masklens.core.errors import DataFormatError
from masklens.core.files.limits import check_image_header, check_mask_size, check_polygon, is_int
from masklens.core.files.rle_validation import rle_counts_problem


class Mask:
    """A binary mask of size (height, width) stored as compressed COCO RLE.

    Only the size and the counts are kept (no RLE dict per mask: a benchmark holds hundreds
    of thousands of masks); :attr:`rle` builds the dict pycocotools wants when asked."""

    __slots__ = ("_size", "_counts", "_area", "_bbox")

    def __init__(self, rle: dict[str, Any]) -> None:
        """Wrap an already-normalised RLE ``{"size": [h, w], "counts": bytes}``."""
        self._size = rle["size"]
        self._counts = rle["counts"]
        self._area: int | None = None
        self._bbox: tuple[float, float, float, float] | None = None

    # ---------------------------------------------------------------- builders
    @classmethod
    def from_array(cls, array: np.ndarray) -> Mask:
        """Encode a 2-D array; any non-zero value is foreground."""
        arr = np.asarray(array)
        if arr.ndim == 3 and arr.shape[2] in (1, 3, 4):
            arr = np.asarray(arr.any(axis=2))
        if arr.ndim != 2:
            raise ValueError(f"mask array must be 2-D, got shape {arr.shape}")
        fortran = np.asfortranarray(arr != 0, dtype=np.uint8)
        rle = mask_utils.encode(fortran)
        return cls({"size": [int(rle["size"][0]), int(rle["size"][1])], "counts": rle["counts"]})

    @classmethod
    def empty(cls, height: int, width: int) -> Mask:
        return cls({"size": [height, width], "counts": _empty_counts(height * width)})

    @classmethod
    def from_png(cls, path: str | Path, *, grey: bool = False) -> Mask:
        """Read a PNG (or any image cv2 reads); non-zero pixels are foreground.

        ``grey=False``: a pixel is foreground when any channel (alpha included) is non-zero.
        ``grey=True``: exactly ``cv2.imread(path, 0) > 0`` (HalluSegBench's official reading):
        cv2's weighted grey conversion of the colour channels, alpha ignored, 16-bit values
        reduced to their high byte (so 1…255 read as background).
        The file must be a regular file whose header declares a size within the limits
        (core/files/limits.py), checked before any pixel is decoded.
        """
        import cv2

        p = Path(path)
        check_image_header(p, what="mask file")
        quiet_opencv(cv2)
        try:
            arr = cv2.imread(str(p), cv2.IMREAD_GRAYSCALE if grey else cv2.IMREAD_UNCHANGED)
        except cv2.error:
            arr = None
        if arr is None:
            raise DataFormatError("cannot decode mask image", path=p)
        return cls.from_array(arr)

    @classmethod
    def from_coco(
        cls,
        segmentation: Any,
        height: int | None = None,
        width: int | None = None,
        *,
        path: str | Path | None = None,
        record: str | int | None = None,
        field: str = "segmentation",
    ) -> Mask:
        """Parse a COCO ``segmentation`` field: RLE (str/bytes/list counts) or polygons.

        Polygons need ``height`` and ``width``. Malformed input raises
        :class:`DataFormatError` naming ``path``, ``record`` and ``field``.
        """

        def fail(msg: str) -> DataFormatError:
            return DataFormatError(msg, path=path, record=record, field=field)

        if isinstance(segmentation, dict):
            size = segmentation.get("size")
            counts = segmentation.get("counts")
            if (
                not isinstance(size, (list, tuple))
                or len(size) != 2
                or not all(is_int(v) and v >= 0 for v in size)
            ):
                raise fail("RLE 'size' must be [height, width] of non-negative integers")
            h, w = check_mask_size(size[0], size[1], path=path, record=record, field=field)
            if isinstance(counts, list):
                if not all(is_int(c) and c >= 0 for c in counts):
                    raise fail("uncompressed RLE 'counts' must be non-negative integers")
                if sum(counts) != h * w:
                    raise fail(f"uncompressed RLE counts sum to {sum(counts)}, expected {h * w}")
                rle = mask_utils.frPyObjects({"size": [h, w], "counts": counts}, h, w)
                return cls({"size": [h, w], "counts": rle["counts"]})
            if isinstance(counts, str):
                if not counts.isascii():  # encoding with errors="replace" would yield '?', a valid digit
                    raise fail("corrupt RLE: counts contain characters outside the RLE alphabet")
                counts = counts.encode("ascii")
            if not isinstance(counts, (bytes, bytearray)):
                raise fail("RLE 'counts' must be a string, bytes or a list of integers")
            problem = rle_counts_problem(bytes(counts), h * w)
            if problem:
                raise fail(f"corrupt RLE: {problem}")
            return cls({"size": [h, w], "counts": bytes(counts)})
        if isinstance(segmentation, list):
            if height is None or width is None:
                raise fail("polygon segmentation needs the image height and width")
            polys = [p for p in segmentation if isinstance(p, (list, tuple))]
            if len(polys) != len(segmentation) or any(
                len(p) < 6 or len(p) % 2 or not all(isinstance(v, (int, float)) for v in p)
                for p in polys
            ):
                raise fail("polygons must be lists of at least 3 (x, y) number pairs")
            height, width = check_mask_size(height, width, path=path, record=record, field=field)
            for poly in polys:
                check_polygon(poly, height, width, path=path, record=record, field=field)
            if not polys:
                return cls.empty(height, width)
            rles = mask_utils.frPyObjects([list(map(float, p)) for p in polys], height, width)
            merged = mask_utils.merge(rles)
            return cls({"size": [height, width], "counts": merged["counts"]})
        raise fail(f"unsupported segmentation of type {type(segmentation).__name__}")

    # -------------------------------------------------------------- accessors
    @property
    def rle(self) -> dict[str, Any]:
        """The compressed RLE with bytes counts (as pycocotools wants it), a new dict each time."""
        return {"size": self._size, "counts": self._counts}

    @property
    def counts(self) -> bytes:
        """The compressed RLE counts."""
        return self._counts

    @property
    def height(self) -> int:
        return int(self._size[0])

    @property
    def width(self) -> int:
        return int(self._size[1])

    @property
    def shape(self) -> tuple[int, int]:
        return (self.height, self.width)

    @property
    def area(self) -> int:
        if self._area is None:
            self._area = int(mask_utils.area(self.rle))
        return self._area

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        """COCO box (x, y, w, h), computed once (a mask never changes)."""
        if self._bbox is None:
            x, y, w, h = mask_utils.toBbox(self.rle)
            self._bbox = (float(x), float(y), float(w), float(h))
        return self._bbox

    def to_array(self) -> np.ndarray:
        """Decode to a boolean (height, width) array."""
        return mask_utils.decode(self.rle).astype(bool)

    def to_array_c(self) -> np.ndarray:
        """Decode to a C-ordered boolean array with one copy (pycocotools decodes 0/1 bytes in
        column order: the copy to row order is the only one; ``to_array`` then a row-order copy
        made two)."""
        return np.ascontiguousarray(mask_utils.decode(self.rle)).view(bool)

    def to_coco(self) -> dict[str, Any]:
        """JSON-ready RLE with ``str`` counts."""
        return {"size": [self.height, self.width], "counts": self._counts.decode("ascii")}

    def resized(self, height: int, width: int) -> Mask:
        return resize_nearest(self, height, width)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mask) and self.shape == other.shape and (
            self._counts == other._counts
        )

    def __hash__(self) -> int:
        return hash((self.shape, self._counts))

    def __repr__(self) -> str:
        return f"Mask({self.height}x{self.width}, area={self.area})"


# ------------------------------------------------------------------- helpers
def _empty_counts(n_pixels: int) -> bytes:
    rle = mask_utils.frPyObjects({"size": [1, n_pixels], "counts": [n_pixels]}, 1, n_pixels)
    return rle["counts"]


def resize_nearest(mask: Mask, height: int, width: int) -> Mask:
    """Nearest-neighbour resize to (height, width); a no-op when the size matches.

    Uses pixel-centre sampling (``cv2.INTER_NEAREST_EXACT``), which matches
    ``PIL.Image.resize(..., Image.NEAREST)``; the COCO-style benchmarks' official scripts do not
    resize at all (see :func:`resize_nearest_floor` for HalluSegBench's cv2 rule).
    """
    return _resize(mask, height, width, "INTER_NEAREST_EXACT")


def _resize(mask: Mask, height: int, width: int, interpolation: str) -> Mask:
    """cv2 resize with the named ``cv2.INTER_*`` flag; a no-op (cv2 not imported) when the size matches."""
    if mask.shape == (height, width):
        return mask
    import cv2

    arr = mask_utils.decode(mask.rle)  # uint8 (h, w), as cv2 wants it
    return Mask.from_array(cv2.resize(arr, (width, height), interpolation=getattr(cv2, interpolation)))


def _rles(masks: Sequence[Mask]) -> list[dict[str, Any]]:
    return [m.rle for m in masks]


#: pycocotools holds the GIL for a whole IoU call, and its work grows with the RLE lengths of the
#: pairs it merges. No bound (scripts, the command line): one call per matrix, the fastest. The
#: window's jobs, running beside the GUI thread, compute under :func:`iou_call_bound`
#: (``gui.jobs.workers``): a real-size 100-mask Grounded SAM 2 result against its ground truth held
#: the GIL 110–175 ms in one call. The bound is in characters of RLE, counted as if every pair's
#: boxes overlapped. It is a context variable: it holds in the thread (or task) that set it only.
_iou_call_work: contextvars.ContextVar[int | None] = contextvars.ContextVar("iou_call_work", default=None)


@contextlib.contextmanager
def iou_call_bound(work: int | None) -> Iterator[None]:
    """Within the block, in this thread, :func:`iou_matrix` bounds the work of each pycocotools
    call to ``work`` characters of RLE (None: one call per matrix)."""
    token = _iou_call_work.set(work)
    try:
        yield
    finally:
        _iou_call_work.reset(token)


def current_iou_call_work() -> int | None:
    """The bound :func:`iou_matrix` uses here and now (None: one call per matrix)."""
    return _iou_call_work.get()


def _groups(sizes: Sequence[int], cost: Callable[[int], int], limit: int) -> list[slice]:
    """Consecutive items whose summed ``cost(size)`` stays within ``limit`` (one item alone may
    be more)."""
    groups, start, work = [], 0, 0
    for i, size in enumerate(sizes):
        if i > start and work + cost(size) > limit:
            groups.append(slice(start, i))
            start, work = i, 0
        work += cost(size)
    groups.append(slice(start, len(sizes)))
    return groups


def iou_blocks(preds: Sequence[dict[str, Any]], gts: Sequence[dict[str, Any]],
               limit: int | None) -> list[tuple[slice, slice]]:
    """(prediction rows, ground-truth columns) per pycocotools call: each block's bound on the
    work (every pair merged, and the block's ground truth parsed again) at most ``limit``
    unless one pair alone is more; one block when it is ``None``."""
    if limit is None:
        return [(slice(0, len(preds)), slice(0, len(gts)))]
    p_len, g_len = [len(p["counts"]) for p in preds], [len(g["counts"]) for g in gts]
    longest = max(p_len)
    blocks: list[tuple[slice, slice]] = []
    # columns: with the longest prediction, a column costs its own length and one pair's merge
    for cols in _groups(g_len, lambda n: 2 * n + longest, limit):
        width, parsed = cols.stop - cols.start, sum(g_len[cols])
        rows_cost = lambda m, w=width, g=parsed: w * m + g  # noqa: E731 - a row: its merges with the block's columns
        blocks.extend((rows, cols) for rows in _groups(p_len, rows_cost, limit))
    return blocks


def iou_matrix(preds: Sequence[Mask], gts: Sequence[Mask], *, call_work: int | None = None) -> np.ndarray:
    """IoU of every prediction (rows) with every ground truth (columns), on RLE.

    All masks must share one size (resize predictions first). IoU of two empty
    masks is 0 (pycocotools' convention, which is also the official scripts'). ``call_work``
    bounds each pycocotools call's work (:func:`iou_blocks`); by default the bound of
    :func:`iou_call_bound` in force here, if any.
    """
    out = np.zeros((len(preds), len(gts)), dtype=np.float64)
    if not preds or not gts:
        return out
    rles, targets = _rles(preds), _rles(gts)
    limit = call_work if call_work is not None else _iou_call_work.get()
    for rows, cols in iou_blocks(rles, targets, limit):  # pycocotools holds the GIL for a whole call
        block = mask_utils.iou(rles[rows], targets[cols], [0] * (cols.stop - cols.start))
        out[rows, cols] = np.asarray(block, dtype=np.float64).reshape(rows.stop - rows.start, -1)
    return out


def intersection_matrix(preds: Sequence[Mask], gts: Sequence[Mask]) -> np.ndarray:
    """Exact integer intersection areas |p ∩ g| for every pair, derived from RLE IoU."""
    iou = iou_matrix(preds, gts)
    if iou.size == 0:
        return np.zeros(iou.shape, dtype=np.int64)
    a = np.array([m.area for m in preds], dtype=np.float64)[:, None]
    b = np.array([m.area for m in gts], dtype=np.float64)[None, :]
    # iou = I / (A + B - I)  =>  I = iou (A + B) / (1 + iou); exact after rounding
    return np.rint(iou * (a + b) / (1.0 + iou)).astype(np.int64)


def iou(a: Mask, b: Mask) -> float:
    return float(iou_matrix([a], [b])[0, 0])


def intersection_area(a: Mask, b: Mask) -> int:
    return intersect_all([a, b]).area


def union_area(a: Mask, b: Mask) -> int:
    return union_all([a, b], *a.shape).area


def _check_same_size(masks: Sequence[Mask], shape: tuple[int, int]) -> None:
    """pycocotools silently mis-merges masks of different sizes; refuse them."""
    for m in masks:
        if m.shape != tuple(shape):
            raise ValueError(f"mask of size {m.shape} combined with size {tuple(shape)}; resize first")


def union_all(masks: Sequence[Mask], height: int, width: int) -> Mask:
    """Union of masks (an empty mask of the given size when there are none)."""
    if not masks:
        return Mask.empty(height, width)
    _check_same_size(masks, (height, width))
    if len(masks) == 1:
        return masks[0]
    merged = mask_utils.merge(_rles(masks), intersect=False)
    return Mask({"size": [height, width], "counts": merged["counts"]})


def intersect_all(masks: Sequence[Mask]) -> Mask:
    """Intersection of one or more masks of one size."""
    if not masks:
        raise ValueError("intersect_all needs at least one mask")
    _check_same_size(masks, masks[0].shape)
    if len(masks) == 1:
        return masks[0]
    merged = mask_utils.merge(_rles(masks), intersect=True)
    return Mask({"size": list(masks[0].shape), "counts": merged["counts"]})


def resize_nearest_floor(mask: Mask, height: int, width: int) -> Mask:
    """Nearest-neighbour resize with ``cv2.INTER_NEAREST`` (source index = floor(dst · src/dst)).

    This is what the HalluSegBench scripts use; it differs from the pixel-centre
    sampling of :func:`resize_nearest` by up to one source pixel. No-op when the
    size matches.
    """
    return _resize(mask, height, width, "INTER_NEAREST")


def quiet_opencv(cv2: Any) -> None:
    """OpenCV's own log lines ("[ERROR:0@…] imread_…" for a broken PNG header) off: masklens
    reports every undecodable file itself, in one clear line."""
    global _opencv_quiet
    if not _opencv_quiet:
        _opencv_quiet = True
        with contextlib.suppress(AttributeError, cv2.error):
            cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)


_opencv_quiet = False
