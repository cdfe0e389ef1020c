"""The bulk RLE check (core/rle_validation.py) gives exactly the single-string answers on
hostile counts: runs of any size (numbers of 1 to 8 characters), negative runs, wrong totals,
strings ending mid-number (so a number runs on into the next string), characters outside the
alphabet, empty strings, and chunk boundaries anywhere."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import masklens.core.rle_validation as validation
from masklens.core.rle_validation import rle_counts_problem, rle_counts_problems

ALPHABET = bytes(range(48, 112))


def encode(runs: list[int]) -> bytes:
    """pycocotools' rleToString for any integers (deltas from run i - 2 for i > 2)."""
    out = bytearray()
    for i, run in enumerate(runs):
        x = run - runs[i - 2] if i > 2 else run
        more = True
        while more:
            c = x & 0x1F
            x >>= 5
            more = x != -1 if c & 0x10 else x != 0
            out.append((c | (0x20 if more else 0)) + 48)
    return bytes(out)


RUN = st.one_of(st.integers(0, 40), st.integers(0, 1 << 20), st.integers(-3, 1 << 36))


@st.composite
def counts_case(draw) -> tuple[bytes, int]:
    runs = draw(st.lists(RUN, max_size=12))
    counts = encode(runs)
    how = draw(st.sampled_from(["keep", "keep", "keep", "cut", "flip", "tail", "junk"]))
    if how == "cut" and counts:  # may end in the middle of a number
        counts = counts[: draw(st.integers(0, len(counts) - 1))]
    elif how == "flip" and counts:
        i = draw(st.integers(0, len(counts) - 1))
        counts = counts[:i] + bytes([draw(st.sampled_from(list(ALPHABET)))]) + counts[i + 1 :]
    elif how == "tail":  # a continuation character at the end
        counts += bytes([draw(st.integers(80, 111))])
    elif how == "junk":
        counts = bytes(draw(st.lists(st.integers(0, 255), max_size=8)))
    pixels = max(0, sum(runs)) + draw(st.sampled_from([0, 0, 0, 1, -1]))
    return counts, pixels


@settings(max_examples=500, deadline=None)
@given(st.lists(counts_case(), min_size=1, max_size=10), st.sampled_from([1 << 20, 1, 7, 40]))
def test_bulk_equals_single_on_hostile_counts(cases, chunk) -> None:
    counts = [c for c, _ in cases]
    pixels = [p for _, p in cases]
    old, validation._CHUNK_BYTES = validation._CHUNK_BYTES, chunk
    try:
        got = rle_counts_problems(counts, pixels)
    finally:
        validation._CHUNK_BYTES = old
    assert got == [rle_counts_problem(c, p) for c, p in cases]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 1 << 22), min_size=1, max_size=20), min_size=1, max_size=8))
def test_sound_counts_are_proven_in_bulk(run_lists) -> None:
    """Sound strings (numbers of up to 6 characters) need no single re-check."""
    counts = [encode(r) for r in run_lists]
    pixels = [sum(r) for r in run_lists]
    lens = validation.np.fromiter(map(len, counts), dtype=validation.np.int64)
    unproven = validation._bulk_unproven(counts, validation.np.asarray(pixels), lens)
    assert not unproven.any()
