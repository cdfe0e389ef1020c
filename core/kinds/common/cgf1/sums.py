"""Per-subset sums of the cgF1 integer columns at any score threshold in O(log levels).

The summary at threshold t sums, over the entries of a subset, the integer columns of each
entry's row at t (IL counts, ndt, ngt, TP@10 …; see ``EntryStack.row_sums_table``). An
entry's row moves up by one each time t passes one of its score levels, so that sum is the
sum of every entry's row 0 plus, for each level ≥ t, the change its row brings. With the
levels sorted by score (descending) and those changes summed cumulatively once, a new t is
one binary search and one row read. Integer sums do not depend on their order: exact.
"""

from __future__ import annotations

import numpy as np

from masklens.core.kinds.common.cgf1.tables import EntryStack


class MemberSums:
    """The integer column sums of each subset (row of ``members``) of a stack's entries."""

    def __init__(self, stack: EntryStack, ints: np.ndarray, members: np.ndarray) -> None:
        """``ints``: (rows, C) integer columns per flat row; ``members``: (G, E) boolean."""
        self.members = members.copy()
        owner, values = stack.level_owner, stack.level_values
        # the row each level brings its entry to: offset + rank of the level from the top
        order = np.lexsort((-values, owner))
        sizes = np.bincount(owner, minlength=stack.n)
        starts = np.cumsum(sizes) - sizes
        rank = np.empty(values.size, dtype=np.int64)
        rank[order] = np.arange(values.size) - starts[owner[order]] + 1
        row = stack.offsets[owner] + rank
        delta = ints[row] - ints[row - 1]
        base = ints[stack.offsets]
        self._tables = []
        for g in members:
            sel = np.flatnonzero(g[owner])
            by_score = sel[np.argsort(-values[sel], kind="stable")]
            cum = np.zeros((by_score.size + 1, ints.shape[1]), dtype=np.int64)
            np.cumsum(delta[by_score], axis=0, out=cum[1:])
            cum += base[g].sum(axis=0, dtype=np.int64)
            if not cum.size or int(np.abs(cum).max()) < 1 << 31:
                cum = cum.astype(np.int32)  # half the memory; read back as int64
            self._tables.append((values[by_score][::-1].copy(), cum))

    def at(self, t: float) -> np.ndarray:
        """(G, C) int64: each subset's column sums over its entries' rows at threshold ``t``."""
        out = [cum[asc.size - np.searchsorted(asc, t, side="left")] for asc, cum in self._tables]
        return np.array(out, dtype=np.int64).reshape(len(self._tables), -1)


def member_sums(stack: EntryStack, ints: np.ndarray, members: np.ndarray) -> MemberSums:
    """The stack's :class:`MemberSums` for ``members``, kept for the last two selections seen
    (the kinds pass the same one at every threshold)."""
    cache: list[MemberSums] = stack.__dict__.setdefault("_member_sums", [])
    for sums in cache:
        if sums.members.shape == members.shape and np.array_equal(sums.members, members):
            return sums
    sums = MemberSums(stack, ints, members)
    cache[:] = [sums, *cache[:1]]
    return sums
