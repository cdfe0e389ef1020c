"""The bulk RLE check (core/files/rle_validation.py) gives exactly the single-string answers on
hostile counts: runs of any size (numbers of 1 to 8 characters), negative runs, wrong totals,
strings ending mid-number (so a number runs on into the next string), characters outside the
alphabet, empty strings, and chunk boundaries anywhere."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import masklens.core.files.rle_validation as validation
from masklens.core.files.rle_validation import rle_counts_problem, rle_counts_problems

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


def _unproven(counts: list[bytes], pixels: list[int]) -> list[bool]:
    """The bulk pass alone over one chunk: which strings it leaves to the single check."""
    lens = validation.np.fromiter(map(len, counts), dtype=validation.np.int64)
    return validation._bulk_unproven(counts, validation.np.asarray(pixels), lens).tolist()


def _longest_number(counts: bytes) -> int:
    """Characters of the longest number in ``counts`` (continuation characters + 1)."""
    return max(map(len, bytes(c >= 80 for c in counts).split(b"\0"))) + 1


def test_multi_character_numbers_at_their_limits() -> None:
    """Numbers of 2 to 6 characters at the ends of their ranges (as absolute runs and as
    deltas) are decoded exactly, sound strings of them proven in bulk; a string with a
    longer number (7+ characters) goes to the single check."""
    cases = []
    for chars in range(1, 9):
        for v in (-(1 << (5 * chars - 1)), (1 << (5 * chars - 1)) - 1):
            b = max(-v, 0)
            for runs in ([v], [3, v], [1 << 20, 7, v, 9], [0, b, 2, b + v], [4, b, 1, b + v, 6]):
                cases += [(encode(runs), max(sum(runs) + d, 0)) for d in (0, 1)]
    counts = [c for c, _ in cases]
    pixels = [p for _, p in cases]
    want = [rle_counts_problem(c, p) for c, p in cases]
    assert rle_counts_problems(counts, pixels) == want
    longest = [_longest_number(c) for c in counts]
    unproven = _unproven(counts, pixels)
    proven_lengths = set()
    for w, n, u in zip(want, longest, unproven, strict=True):
        assert u == (n > 6 or w is not None)
        if w is None and not u:
            proven_lengths.add(n)
    assert proven_lengths == {1, 2, 3, 4, 5, 6}


def test_string_ending_mid_number_leaves_the_next_one_proven() -> None:
    """A string that ends in a continuation character is faulty; the next string is read
    from its own start (and proven), not as the rest of that number."""
    good = encode([5, 40, 3])
    for tail in (b"P", b"o", b"PP", b"1P"):
        counts = [tail, good, tail, b"", good]
        pixels = [48, 48, 48, 0, 48]
        assert _unproven(counts, pixels) == [True, False, True, False, False]
        want = [rle_counts_problem(c, p) for c, p in zip(counts, pixels, strict=True)]
        assert rle_counts_problems(counts, pixels) == want


def test_running_sums_past_int32_fall_back_to_int64() -> None:
    """Sound strings whose chunk's running sums pass 2**31 are still proven (the int32 bound
    picks int64), and a negative run there is still caught."""
    big = (1 << 29) - 1  # the largest 6-character number
    counts = [encode([0, big])] * 6 + [encode([0, big, 0, -5])]
    pixels = [big] * 6 + [big - 5]
    assert _unproven(counts, pixels) == [False] * 6 + [True]
    want = [rle_counts_problem(c, p) for c, p in zip(counts, pixels, strict=True)]
    assert rle_counts_problems(counts, pixels) == want


def test_chain_sums_past_2_to_32_are_summed_exactly() -> None:
    """A chain whose runs sum to 2**32 or more (int32 sums wrap to 0 modulo 2**32) gets its
    exact sum: the string is sound only for the exact total (chains of either parity, among
    chains summed in int32)."""
    odd = encode([0] + [1 << 26, 0] * 64)  # 64 runs of 2**26 at odd places: 2**32 pixels
    even = encode([1, 0] + [1 << 26, 0] * 64)  # the same at even places, plus 1
    small = encode([3, 4, 5])
    counts = [odd, small, even, odd, small, even, odd, even]
    pixels = [1 << 32, 12, (1 << 32) + 1, 0, 13, 1, (1 << 32) + 1, (1 << 32) + 1]
    assert _unproven(counts, pixels) == [False, False, False, True, True, True, True, False]
    want = [rle_counts_problem(c, p) for c, p in zip(counts, pixels, strict=True)]
    assert rle_counts_problems(counts, pixels) == want


def test_numbers_over_6_characters_are_never_proven() -> None:
    """A number of 7+ characters is left to the single check whatever the pixel count, also
    one equal to a reading of it cut short or with its top digit moved down."""
    for v in (1 << 30, -(1 << 30) - 1, (1 << 35) + 1, 1 << 40):
        digits = []
        x = v
        for _ in range(len(encode([v]))):
            digits.append(x & 31)
            x >>= 5
        top = digits[-1] - 32 * (digits[-1] >= 16)
        decoys = {v}
        for m in range(1, len(digits)):
            low = sum(d << (5 * k) for k, d in enumerate(digits[:m]))
            decoys |= {low, low + (top << (5 * m))}
        decoys = sorted(p for p in decoys if p >= 0)
        counts = [encode([v])] * len(decoys)
        assert all(_unproven(counts, decoys))
        want = [rle_counts_problem(c, p) for c, p in zip(counts, decoys, strict=True)]
        assert rle_counts_problems(counts, decoys) == want


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 1 << 22), min_size=1, max_size=30), min_size=1, max_size=12),
    st.sampled_from([1, 7, 40, 300, 1 << 20]),
)
def test_sound_counts_need_no_recheck_across_chunks(run_lists, chunk) -> None:
    """Across chunks of any size (work arrays reused, left holding the last chunk's values),
    sound strings are all proven in bulk: none is re-checked alone."""
    counts = [encode(r) for r in run_lists]
    pixels = [sum(r) for r in run_lists]
    calls = []
    single = validation.rle_counts_problem
    old, validation._CHUNK_BYTES = validation._CHUNK_BYTES, chunk
    validation.rle_counts_problem = lambda c, p: calls.append(c) or single(c, p)
    try:
        assert rle_counts_problems(counts, pixels) == [None] * len(counts)
    finally:
        validation._CHUNK_BYTES = old
        validation.rle_counts_problem = single
    assert calls == []
