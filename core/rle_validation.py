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


_ZERO = np.zeros(1, dtype=np.int64)
_CHUNK_BYTES = 1 << 18  # batch validation works on ~256 kB of counts at a time (its temporaries stay in cache)


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
    start = 0
    while start < n:  # chunks of ~256 kB bound the temporaries: up to the string reaching it
        reached = (int(stop[start - 1]) if start else 0) + _CHUNK_BYTES
        end = min(int(np.searchsorted(stop, reached)) + 1, n)
        for i in np.flatnonzero(_bulk_unproven(counts[start:end], pixels[start:end], lens[start:end])) + start:
            out[i] = rle_counts_problem(bytes(counts[i]), int(pixels[i]))
        start = end
    return out


def _bulk_unproven(counts: Sequence[bytes], pixels: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Which strings the bulk pass cannot prove sound (every faulty one among them)."""
    n = len(counts)
    raw = np.frombuffer(b"".join(counts), dtype=np.uint8)
    bad = (lens == 0) & (pixels != 0)
    if raw.size == 0:
        return bad
    if raw.min() < 48 or raw.max() > 111:
        return np.ones(n, dtype=bool)
    stop = np.cumsum(lens)
    cont = raw >= 80  # (c - 48) & 0x20: the number goes on
    ci = np.flatnonzero(cont)
    sv8 = raw - np.uint8(48)  # each character read as a one-character number, in one byte:
    sv8 &= 31  # ((c - 48) & 31 ^ 16) - 16, as _SIGNED (no int64 table lookup per character)
    sv8 ^= 16
    sv8 = sv8.view(np.int8)
    sv8 -= 16
    nnum = lens.copy()
    if ci.size:  # multi-character numbers are rare: decode them sparsely
        owner = np.searchsorted(stop, ci, side="right")  # the string of each continuation character
        nnum -= np.bincount(owner, minlength=n)
        head = np.flatnonzero(np.diff(ci) != 1)  # first continuation of each number, in ci
        head = np.concatenate((_ZERO, head + 1))
        glen = np.diff(head, append=ci.size)  # its continuation characters
        t = ci[head + glen - 1] + 1  # the last character of each number
        if t[-1] >= raw.size:
            return np.ones(n, dtype=bool)
        a_own = owner[head]
        t_own = owner[head + glen - 1]
        off = t >= stop[t_own]  # the number ends in a later string
        t_own[off] = np.searchsorted(stop, t[off], side="right")
        length = glen + 1
        for i in np.flatnonzero((length > 6) | (a_own != t_own)):
            bad[a_own[i] : t_own[i] + 1] = True
        ok = length <= 6
        head, glen, t, length = head[ok], glen[ok], t[ok], length[ok]
        # value = sum of (c - 48) & 31 << 5 k over its characters k, sign-extended at the last
        rank = _ranks(glen)
        inner = ci[np.repeat(head, glen) + rank]  # the continuation characters, in order
        part = ((raw[inner].astype(np.int64) - 48) & 31) << (5 * rank)
        last = (raw[t].astype(np.int64) - 48) & 31
        value = np.add.reduceat(part, np.cumsum(glen) - glen) if part.size else np.zeros(0, np.int64)
        value += last << (5 * glen)
        neg = (last & 16) != 0
        value[neg] -= np.left_shift(1, 5 * length[neg])
        sv = sv8[~cont].astype(np.int64)  # one entry per number (its last character)
        sv[t - head - glen] = value  # t minus the continuation characters before it
    else:
        sv = sv8.astype(np.int64)
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
        is_chain = order >= junk.size  # a chain (not a run 0) segment
        mins = np.minimum.reduceat(stream, starts[order])[is_chain]
        sums = np.add.reduceat(stream, starts[order])[is_chain]
        own = chained[np.argsort(g0[chained], kind="stable")]
        cs = g0[own] // 2
        base = np.where(cs > 0, stream[np.maximum(cs - 1, 0)], 0)
        bad[own[mins < base]] = True
        total[own] += sums - clen[own] * base
    return bad | (total != pixels)


def _ranks(sizes: np.ndarray) -> np.ndarray:
    """0, 1, …, k - 1 for each k in ``sizes``, concatenated."""
    total = int(sizes.sum())
    return np.arange(total) - np.repeat(np.cumsum(sizes) - sizes, sizes)
