"""One mask type for all of masklens: COCO RLE first (pycocotools), decoded lazily.

Accepted inputs: compressed RLE (counts as ``str`` or ``bytes``), uncompressed RLE
(counts as a list of ints), COCO polygons, binary arrays and PNG files (any
non-zero pixel is foreground). Area, intersection, union and IoU are computed on
the RLE without decoding. A prediction whose size differs from the ground
truth's is resized with nearest neighbour (see :func:`resize_nearest`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pycocotools import mask as mask_utils

from masklens.core.errors import DataFormatError


class Mask:
    """A binary mask of size (height, width) stored as compressed COCO RLE."""

    __slots__ = ("_rle", "_area")

    def __init__(self, rle: dict[str, Any]) -> None:
        """Wrap an already-normalised RLE ``{"size": [h, w], "counts": bytes}``."""
        self._rle = rle
        self._area: int | None = None

    # ---------------------------------------------------------------- builders
    @classmethod
    def from_array(cls, array: np.ndarray) -> Mask:
        """Encode a 2-D array; any non-zero value is foreground."""
        arr = np.asarray(array)
        if arr.ndim == 3 and arr.shape[2] in (1, 3, 4):
            arr = arr.any(axis=2)
        if arr.ndim != 2:
            raise ValueError(f"mask array must be 2-D, got shape {arr.shape}")
        fortran = np.asfortranarray(arr != 0, dtype=np.uint8)
        rle = mask_utils.encode(fortran)
        return cls({"size": [int(rle["size"][0]), int(rle["size"][1])], "counts": rle["counts"]})

    @classmethod
    def empty(cls, height: int, width: int) -> Mask:
        return cls({"size": [height, width], "counts": _empty_counts(height * width)})

    @classmethod
    def from_png(cls, path: str | Path) -> Mask:
        """Read a PNG (or any image cv2 reads); non-zero pixels are foreground."""
        import cv2

        p = Path(path)
        if not p.exists():
            raise DataFormatError("mask file not found", path=p)
        arr = cv2.imread(str(p), cv2.IMREAD_UNCHANGED)
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
                or not all(isinstance(v, int) and v >= 0 for v in size)
            ):
                raise fail("RLE 'size' must be [height, width] of non-negative integers")
            h, w = int(size[0]), int(size[1])
            if isinstance(counts, list):
                if not all(isinstance(c, int) and c >= 0 for c in counts):
                    raise fail("uncompressed RLE 'counts' must be non-negative integers")
                if sum(counts) != h * w:
                    raise fail(f"uncompressed RLE counts sum to {sum(counts)}, expected {h * w}")
                rle = mask_utils.frPyObjects({"size": [h, w], "counts": counts}, h, w)
                return cls({"size": [h, w], "counts": rle["counts"]})
            if isinstance(counts, str):
                counts = counts.encode("ascii", errors="replace")
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
            if not polys:
                return cls.empty(height, width)
            rles = mask_utils.frPyObjects([list(map(float, p)) for p in polys], height, width)
            merged = mask_utils.merge(rles)
            return cls({"size": [height, width], "counts": merged["counts"]})
        raise fail(f"unsupported segmentation of type {type(segmentation).__name__}")

    # -------------------------------------------------------------- accessors
    @property
    def rle(self) -> dict[str, Any]:
        """The compressed RLE with bytes counts (as pycocotools wants it)."""
        return self._rle

    @property
    def height(self) -> int:
        return int(self._rle["size"][0])

    @property
    def width(self) -> int:
        return int(self._rle["size"][1])

    @property
    def shape(self) -> tuple[int, int]:
        return (self.height, self.width)

    @property
    def area(self) -> int:
        if self._area is None:
            self._area = int(mask_utils.area(self._rle))
        return self._area

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        """COCO box (x, y, w, h)."""
        x, y, w, h = mask_utils.toBbox(self._rle)
        return (float(x), float(y), float(w), float(h))

    def to_array(self) -> np.ndarray:
        """Decode to a boolean (height, width) array."""
        return mask_utils.decode(self._rle).astype(bool)

    def to_coco(self) -> dict[str, Any]:
        """JSON-ready RLE with ``str`` counts."""
        return {"size": [self.height, self.width], "counts": self._rle["counts"].decode("ascii")}

    def resized(self, height: int, width: int) -> Mask:
        return resize_nearest(self, height, width)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mask) and self.shape == other.shape and (
            self._rle["counts"] == other._rle["counts"]
        )

    def __hash__(self) -> int:
        return hash((self.shape, self._rle["counts"]))

    def __repr__(self) -> str:
        return f"Mask({self.height}x{self.width}, area={self.area})"


# ------------------------------------------------------------------- helpers
def _empty_counts(n_pixels: int) -> bytes:
    rle = mask_utils.frPyObjects({"size": [1, n_pixels], "counts": [n_pixels]}, 1, n_pixels)
    return rle["counts"]


def rle_counts_problem(counts: bytes, n_pixels: int) -> str | None:
    """Validate compressed COCO RLE counts without decoding; None when sound.

    pycocotools does not bounds-check counts, so corrupt input could crash the
    process; this parses the LEB128-like string (vectorised) and checks that runs
    are non-negative and sum to height × width.
    """
    if not counts:
        return "empty counts" if n_pixels else None
    raw = np.frombuffer(counts, dtype=np.uint8).astype(np.int64) - 48
    if raw.min() < 0 or raw.max() > 63:
        return "counts contain characters outside the RLE alphabet"
    more = (raw & 0x20) != 0
    if more[-1]:
        return "counts end in the middle of a number"
    ends = np.flatnonzero(~more)
    starts = np.concatenate(([0], ends[:-1] + 1))
    lengths = ends - starts + 1
    if lengths.max() > 12:
        return "a run length is too large"
    group = np.repeat(np.arange(len(ends)), lengths)
    pos = np.arange(len(raw)) - np.repeat(starts, lengths)
    values = np.zeros(len(ends), dtype=np.int64)
    np.add.at(values, group, (raw & 0x1F) << (5 * pos))
    negative = (raw[ends] & 0x10) != 0
    values[negative] |= -1 << (5 * lengths[negative])
    runs = values.copy()
    # pycocotools: cnts[m] += cnts[m-2] for m > 2
    if len(runs) > 3:
        runs[3::2] = np.cumsum(np.concatenate(([runs[1]], values[3::2])))[1:]
    if len(runs) > 4:
        runs[4::2] = np.cumsum(np.concatenate(([runs[2]], values[4::2])))[1:]
    if (runs < 0).any():
        return "negative run length"
    total = int(runs.sum())
    if total != n_pixels:
        return f"runs cover {total} pixels, expected {n_pixels} (height × width)"
    return None


_CHUNK_BYTES = 1 << 20  # batch validation works on ~1 MB of counts at a time
_SIGNED = np.array([(((c - 48) & 31) ^ 16) - 16 for c in range(256)], dtype=np.int64)


def rle_counts_problems(counts: Sequence[bytes], n_pixels: Sequence[int]) -> list[str | None]:
    """Batch form of :func:`rle_counts_problem` (same answers), vectorised over all strings.

    A bulk pass proves most strings sound; any string it cannot (a superset of the faulty
    ones) is re-checked alone, so the messages are exactly the single-string ones.
    """
    pixels = np.asarray(n_pixels, dtype=np.int64)
    out: list[str | None] = [None] * len(counts)
    start, size = 0, 0
    for end, c in enumerate([*counts, None]):  # chunks of ~1 MB bound the temporaries
        if c is not None and size < _CHUNK_BYTES:
            size += len(c)
            continue
        for i in np.flatnonzero(_bulk_unproven(counts[start:end], pixels[start:end])) + start:
            out[i] = rle_counts_problem(bytes(counts[i]), int(pixels[i]))
        start, size = end, len(c) if c is not None else 0
    return out


def _bulk_unproven(counts: Sequence[bytes], pixels: np.ndarray) -> np.ndarray:
    n = len(counts)
    lens = np.fromiter(map(len, counts), dtype=np.int64, count=n)
    raw = np.frombuffer(b"".join(counts), dtype=np.uint8)
    bad = (lens == 0) & (pixels != 0)
    if raw.size == 0:
        return bad
    if raw.min() < 48 or raw.max() > 111:
        return np.ones(n, dtype=bool)
    stop = np.cumsum(lens)
    cont = raw >= 80  # (c - 48) & 0x20: the number goes on
    ci = np.flatnonzero(cont)
    sv = _SIGNED[raw]  # each character read as a one-character number
    nnum = lens.copy()
    if ci.size:  # multi-character numbers are rare: decode them sparsely
        nnum -= np.bincount(np.searchsorted(stop, ci, side="right"), minlength=n)
        head = np.r_[0, np.flatnonzero(np.diff(ci) != 1) + 1]
        a, t = ci[head], np.r_[ci[head[1:] - 1], ci[-1]] + 1  # first and last character
        if t[-1] >= raw.size:
            return np.ones(n, dtype=bool)
        a_own = np.searchsorted(stop, a, side="right")
        t_own = np.searchsorted(stop, t, side="right")
        length = t - a + 1
        for i in np.flatnonzero((length > 6) | (a_own != t_own)):
            bad[a_own[i] : t_own[i] + 1] = True
        ok = length <= 6
        a, t, length = a[ok], t[ok], length[ok]
        value = np.zeros(a.size, dtype=np.int64)
        for k in range(int(length.max(initial=0))):
            sel = length > k
            value[sel] |= ((raw[a[sel] + k].astype(np.int64) - 48) & 31) << (5 * k)
        neg = ((raw[t].astype(np.int64) - 48) & 16) != 0
        value[neg] -= np.left_shift(1, 5 * length[neg])
        sv[t] = value
        sv = sv[~cont]
    first = np.cumsum(nnum) - nnum
    has = nnum > 0
    total = np.zeros(n, dtype=np.int64)
    total[has] = sv[first[has]]  # run 0
    bad |= total < 0
    for p in (0, 1):  # runs j >= 3 add run j - 2: one cumulative sum per parity stream
        stream = np.cumsum(sv[p::2])
        if stream.size == 0:
            continue
        same = (first % 2) == p
        g0 = np.where(same, first + 2, first + 1)  # where the string's chain in this stream starts
        clen = np.maximum(0, (nnum - (g0 - first) + 1) // 2)
        chained = np.flatnonzero(clen > 0)
        junk = first[same & has] // 2  # run 0 sits in this stream too: its own segment
        starts = np.concatenate((junk, g0[chained] // 2))
        order = np.argsort(starts, kind="stable")
        is_chain = np.r_[np.zeros(junk.size, bool), np.ones(chained.size, bool)][order]
        mins = np.minimum.reduceat(stream, starts[order])[is_chain]
        sums = np.add.reduceat(stream, starts[order])[is_chain]
        own = chained[np.argsort(g0[chained], kind="stable")]
        cs = g0[own] // 2
        base = np.where(cs > 0, stream[np.maximum(cs - 1, 0)], 0)
        bad[own[mins < base]] = True
        total[own] += sums - clen[own] * base
    return bad | (total != pixels)


def resize_nearest(mask: Mask, height: int, width: int) -> Mask:
    """Nearest-neighbour resize to (height, width); a no-op when the size matches.

    Uses pixel-centre sampling (``cv2.INTER_NEAREST_EXACT``), which matches
    ``PIL.Image.resize(..., Image.NEAREST)`` as used by the official scripts.
    """
    if mask.shape == (height, width):
        return mask
    import cv2

    arr = mask.to_array().astype(np.uint8)
    out = cv2.resize(arr, (width, height), interpolation=cv2.INTER_NEAREST_EXACT)
    return Mask.from_array(out)


def _rles(masks: Sequence[Mask]) -> list[dict[str, Any]]:
    return [m.rle for m in masks]


def iou_matrix(preds: Sequence[Mask], gts: Sequence[Mask]) -> np.ndarray:
    """IoU of every prediction (rows) with every ground truth (columns), on RLE.

    All masks must share one size (resize predictions first). IoU of two empty
    masks is 0 (pycocotools' convention, which is also the official scripts').
    """
    if not preds or not gts:
        return np.zeros((len(preds), len(gts)), dtype=np.float64)
    out = mask_utils.iou(_rles(preds), _rles(gts), [0] * len(gts))
    return np.asarray(out, dtype=np.float64).reshape(len(preds), len(gts))


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
    if mask.shape == (height, width):
        return mask
    import cv2

    arr = mask.to_array().astype(np.uint8)
    out = cv2.resize(arr, (width, height), interpolation=cv2.INTER_NEAREST)
    return Mask.from_array(out)
