"""Validation of compressed COCO RLE counts without decoding them.

pycocotools does not bounds-check counts: runs that do not sum to height × width make it
loop forever or write out of bounds. Every compressed RLE masklens reads goes through one of
these checks first (single masks in :meth:`Mask.from_coco`, whole files in batches).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


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


_CHUNK_BYTES = 1 << 20  # batch validation works on ~1 MB of counts at a time (its work arrays: ~10 MB)
_INT32_SAFE = 1 << 31  # prefix sums whose terms' magnitudes sum below this fit in int32
_WRAP = 1 << 32  # int32 sums are exact modulo this
_PARITY = np.array([[0], [1]])


class _Work:
    """Work arrays reused by every chunk of one batch (fresh temporaries per chunk page-fault)."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}

    def get(self, name: str, size: int, dtype: type) -> np.ndarray:
        """The first ``size`` items of the named array (grown when too small)."""
        a = self._arrays.get(name)
        if a is None or a.size < size:
            a = self._arrays[name] = np.empty(max(size, 1024), dtype=dtype)
        return a[:size]


def rle_counts_problems(counts: Sequence[bytes], n_pixels: Sequence[int]) -> list[str | None]:
    """Batch form of :func:`rle_counts_problem` (same answers), vectorised over all strings.

    A bulk pass proves most strings sound; any string it cannot (a superset of the faulty
    ones) is re-checked alone, so the messages are exactly the single-string ones.
    """
    n = len(counts)
    pixels = np.asarray(n_pixels, dtype=np.int64)
    lens = np.fromiter(map(len, counts), dtype=np.int64, count=n)
    stop = np.cumsum(lens)
    out: list[str | None] = [None] * n
    work = _Work()
    start = 0
    while start < n:  # chunks of ~1 MB bound the work arrays: up to the string reaching it
        reached = (int(stop[start - 1]) if start else 0) + _CHUNK_BYTES
        end = min(int(np.searchsorted(stop, reached)) + 1, n)
        unproven = _bulk_unproven(counts[start:end], pixels[start:end], lens[start:end], work)
        for i in (np.flatnonzero(unproven) + start).tolist():
            out[i] = rle_counts_problem(bytes(counts[i]), int(pixels[i]))
        start = end
    return out


def _bulk_unproven(
    counts: Sequence[bytes], pixels: np.ndarray, lens: np.ndarray, work: _Work | None = None
) -> np.ndarray:
    """Which strings the bulk pass cannot prove sound (every faulty one among them)."""
    work = work or _Work()
    n = len(counts)
    raw = np.frombuffer(b"".join(counts), dtype=np.uint8)
    bad = (lens == 0) & (pixels != 0)
    size = raw.size
    if size == 0:
        return bad
    if raw.min() < 48 or raw.max() > 111:
        return np.ones(n, dtype=bool)
    stop = np.cumsum(lens)
    cont = np.greater_equal(raw, 80, out=work.get("cont", size, np.bool_))  # the number goes on
    filled = np.flatnonzero(lens)
    last = stop[filled] - 1
    open_end = cont[last]  # a string ending mid-number: its own last character ends it here,
    if open_end.any():  # so the next string is read from its own start
        bad[filled[open_end]] = True
        cont[last[open_end]] = False
    # each character as a one-character number: ((c - 48) & 31 ^ 16) - 16 == (c & 31) - 16
    sv8 = np.bitwise_and(raw, 31, out=work.get("sv8", size, np.uint8)).view(np.int8)
    sv8 -= 16
    ci = np.flatnonzero(cont)  # continuation characters (rare: multi-character numbers)
    bounds = np.zeros(n + 1, dtype=np.int64)
    bounds[1:] = stop
    before = bounds - np.searchsorted(ci, bounds)  # numbers before each string
    first = before[:-1]
    nnum = np.diff(before)
    m = int(before[-1])
    np.logical_not(cont, out=cont)
    sv = work.get("sv", m + 1, np.int32)  # sv[m] (odd m), flat[-1]: only in sums thrown away
    sv[:m] = sv8[cont]  # one entry per number (its last character)
    magnitude = 16 * m  # bounds the sum of |number| over the chunk
    if ci.size:
        at, value, magnitude_multi = _multi_numbers(ci, cont, sv8, stop, bad)
        magnitude += magnitude_multi
        if magnitude >= _INT32_SAFE:
            sv = sv.astype(np.int64)
        sv[at] = value
    elif magnitude >= _INT32_SAFE:
        sv = sv.astype(np.int64)
    total = np.zeros(n, dtype=np.int64)
    has = nnum > 0
    total[has] = sv[first[has]]  # run 0
    bad |= total < 0
    # runs j >= 3 add run j - 2: a cumulative sum per parity stream, both in one array
    h = (m + 1) // 2
    if sv.dtype == np.int32:
        flat = work.get("prefix", 2 * h + 3, np.int32)
    else:
        flat = np.empty(2 * h + 3, dtype=np.int64)
    prefix = flat[: 2 * h + 2].reshape(2, h + 1)  # row p: 0, then stream p's running sums
    prefix[:, 0] = 0
    np.cumsum(sv[: 2 * h].reshape(h, 2).T, axis=1, out=prefix[:, 1:])
    same = (first & 1) == _PARITY  # run 0 is in this stream: the chain starts at run 2
    clen = np.maximum(nnum - same, 0) // 2  # the chain's runs (1, 3, 5, … or 2, 4, 6, …)
    chained = clen > 0
    rows, own = np.nonzero(chained)
    lo = (rows * (h + 1) + (first[own] + 1 + same[chained]) // 2 + 1).astype(np.intp)
    clen = clen[chained]
    edges = np.empty(2 * lo.size, dtype=np.intp)
    edges[0::2] = lo
    edges[1::2] = lo + clen
    mins = np.minimum.reduceat(flat, edges)[0::2]
    base = flat[lo - 1].astype(np.int64)  # the running sum before the chain
    bad[own[mins < base]] = True
    sums = _chain_sums(flat, edges, lo, clen, base)
    split = int(np.count_nonzero(chained[0]))  # a string is at most once per stream
    total[own[:split]] += sums[:split]
    total[own[split:]] += sums[split:]
    return bad | (total != pixels)


def _chain_sums(
    flat: np.ndarray, edges: np.ndarray, lo: np.ndarray, clen: np.ndarray, base: np.ndarray
) -> np.ndarray:
    """Each chain's sum of runs (its running sums less ``base``), exact where its runs are
    >= 0. int32 sums wrap: their value modulo 2**32 is exact, and the sum itself when no
    more than ``clen`` × the chain's largest run, checked below 2**32 (else summed again)."""
    if flat.dtype != np.int32:
        return np.add.reduceat(flat, edges)[0::2] - clen * base
    sums = np.add.reduceat(flat, edges, dtype=np.int32)[0::2].astype(np.int64)
    sums -= clen * base
    sums &= _WRAP - 1
    largest = np.maximum.reduceat(flat, edges)[0::2] - base
    for i in np.flatnonzero(clen * largest >= _WRAP):
        sums[i] = int(flat[lo[i] : lo[i] + clen[i]].sum(dtype=np.int64)) - int(clen[i] * base[i])
    return sums


def _multi_numbers(
    ci: np.ndarray, number_end: np.ndarray, sv8: np.ndarray, stop: np.ndarray, bad: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """The numbers of two or more characters, sparsely: their indices among the chunk's
    numbers, values (int32; 0 for those over 6 characters, whose strings are marked bad)
    and the sum of their magnitudes. ``ci``: continuation characters; ``number_end``: which
    characters end a number; ``sv8``: each character's signed digit ((c & 31) - 16)."""
    head = np.flatnonzero(number_end[ci - 1])  # in ci; ci - 1 == -1 reads the chunk's last character (ends a number)
    tail = np.empty_like(head)
    tail[:-1] = head[1:] - 1
    tail[-1] = ci.size - 1
    glen = tail - head + 1  # continuation characters of each number
    t = ci[tail] + 1  # its last character
    capped = np.minimum(glen, 5)
    rank = np.arange(ci.size) - np.repeat(head, glen)  # the continuation character's place
    np.minimum(rank, 4, out=rank)
    digits = (sv8[ci] & 31).astype(np.int32) << (5 * rank).astype(np.int32)
    run = np.cumsum(digits, dtype=np.int32)  # wraps, but its differences are exact modulo 2**32
    value = run[tail]
    value[1:] -= run[tail[:-1]]
    value += sv8[t].astype(np.int32) << (5 * capped).astype(np.int32)  # signed top digit
    too_long = glen > 5
    if too_long.any():
        bad[np.searchsorted(stop, t[too_long], side="right")] = True
        value[too_long] = 0
    at = t - tail - 1  # characters before it, less the continuation ones
    return at, value, int(np.abs(value).sum(dtype=np.int64))
