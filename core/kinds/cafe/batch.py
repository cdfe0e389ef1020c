"""The flat, threshold-free data of one CAFE stage-1 run (:class:`CafeBatch`) and its builder.

Kept beside the run's per-pair caches so that the kind's stacks are numpy gathers from a few
arrays instead of a walk over every pair (``cafe_stacks.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from masklens.core.kinds.cafe.io import GROUPS
from masklens.core.kinds.cafe.metrics import PairStack
from masklens.core.kinds.common.cgf1.tables import EntryTable

#: group name -> its bit in an entry's membership (GROUPS[0], Overall, holds every entry)
#: keyed by group name; a sample without a group (None) is in no group: .get(None, 0) is 0
GROUP_BITS: dict[str | None, int] = {g: 1 << i for i, g in enumerate(GROUPS[1:])}


@dataclass(eq=False)
class CafeBatch:
    """Flat, threshold-free data of all pairs of one :func:`all_overlaps` run.

    ``cand_*`` list the cgF1 entry candidates in the order the kind visits them (per pair its
    positive then its negative entry when they count, then the orphans riding on the
    sample): image id, group bits, whether a later duplicate ORs its bits in, and either the
    entry's :class:`EntryTable` or its span in ``src_s``/``src_v`` (scores, IoUs with its
    one instance or -1 without one) with ``cand_gt`` (whether it has that instance).
    """

    n: int
    pairs: PairStack
    pair_bits: np.ndarray  # (pairs,) group bit of each pair
    missing: int  # prompts without a prediction entry
    cand_key: list[Any]
    cand_bit: list[int]
    cand_shared: list[bool]
    cand_table: list[EntryTable | None]
    cand_start: np.ndarray
    cand_len: np.ndarray
    cand_gt: np.ndarray
    src_s: np.ndarray
    src_v: np.ndarray

    @classmethod
    def concat(cls, runs: Sequence[CafeBatch]) -> CafeBatch:
        """The runs' pairs one after another (runs over consecutive slices of the samples)."""
        if len(runs) == 1:
            return runs[0]
        shift = np.cumsum([0] + [r.n for r in runs])
        src = np.cumsum([0] + [r.src_s.size for r in runs])

        def flat(side: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            return tuple(  # type: ignore[return-value]
                np.concatenate([(r.pairs.pos, r.pairs.neg)[side][k] + (shift[i] if k == 2 else 0)
                                for i, r in enumerate(runs)])
                for k in range(3)
            )  # fmt: skip

        pairs = PairStack(int(shift[-1]), flat(0), flat(1),
                          np.concatenate([r.pairs.soft for r in runs]))  # fmt: skip
        return cls(
            int(shift[-1]), pairs, np.concatenate([r.pair_bits for r in runs]),
            sum(r.missing for r in runs), [k for r in runs for k in r.cand_key],
            [b for r in runs for b in r.cand_bit], [x for r in runs for x in r.cand_shared],
            [t for r in runs for t in r.cand_table],
            np.concatenate([r.cand_start + src[i] for i, r in enumerate(runs)]),
            np.concatenate([r.cand_len for r in runs]), np.concatenate([r.cand_gt for r in runs]),
            np.concatenate([r.src_s for r in runs]), np.concatenate([r.src_v for r in runs]),
        )  # fmt: skip



class RunBuilder:
    """Collects a run's pairs in order (:meth:`pair`), then :meth:`build` gives its batch.

    ``scores``/``target_ious``: every row of the run (a pair's positive instances, then its
    negative's) — its score and its IoU with the pair's target.
    """

    def __init__(self, scores: np.ndarray, target_ious: np.ndarray) -> None:
        self.scores, self.tv = scores, target_ious
        self.key: list[Any] = []
        self.bit: list[int] = []
        self.shared: list[bool] = []
        self.table: list[EntryTable | None] = []
        self.start: list[int] = []
        self.length: list[int] = []
        self.gt: list[bool] = []
        self.extra_s: list[float] = []
        self.extra_v: list[float] = []
        self.no_gt: list[tuple[int, int]] = []  # (first row, rows) of rows read with IoU -1
        self.pair_bits: list[int] = []
        self.missing = 0

    def pair(self, group: str | None, r0: int, pos_ious: tuple[float, ...],
             neg_ious: tuple[float, ...], pos_entry: tuple[Any, bool], pos_table: Any,
             neg_entry: tuple[Any, bool], neg_table: Any, own: tuple[str | None, str | None],
             orphans: Sequence[tuple[Any, Any, str | None]], missing: int) -> None:  # fmt: skip
        """One pair whose rows start at ``r0``: its entry candidates (positive, negative when
        they count, then the orphans riding on it), in the order the kind visits them."""
        pair_bit = GROUP_BITS.get(group, 0)
        self.pair_bits.append(pair_bit)
        self.missing += missing
        for (key, counts), table, mine, start, ious in (
            (pos_entry, pos_table, own[0], r0, pos_ious),
            (neg_entry, neg_table, own[1], r0 + len(pos_ious), neg_ious),
        ):
            if counts:
                bit = GROUP_BITS.get(mine, 0) if mine is not None else pair_bit
                self.candidate(key, bit, mine is None, table, start, ious)
        for key, table, g in orphans:
            self.candidate(key, GROUP_BITS.get(g, 0), False, table, 0, None)

    def candidate(self, key: Any, bit: int, shared: bool, table: Any, start: int,
                  row_ious: tuple[float, ...] | None) -> None:  # fmt: skip
        """One entry candidate. ``row_ious``: the target IoUs of rows [start, start + n) when
        the entry's scores are those rows (None: an orphan); an entry without instance reads
        them as -1, one matched against another instance keeps its values apart."""
        self.key.append(key)
        self.bit.append(bit)
        self.shared.append(shared)
        if isinstance(table, EntryTable):
            self.table.append(table)
            self.start.append(0)
            self.length.append(0)
            self.gt.append(False)
            return
        sc, io = table
        self.table.append(None)
        self.length.append(len(sc))
        self.gt.append(io is not None)
        if row_ious is not None and (io is None or io is row_ious):
            self.start.append(start)
            if io is None:
                self.no_gt.append((start, len(sc)))
        else:
            self.start.append(self.scores.size + len(self.extra_s))
            self.extra_s.extend(sc)
            self.extra_v.extend(io if io is not None else [-1.0] * len(sc))

    def build(self, n_pos: list[int], n_neg: list[int], soft: list[int]) -> CafeBatch:
        n = len(n_pos)
        tv = self.tv
        src_v = tv.copy()
        if self.no_gt:
            starts, lens = np.array(self.no_gt, dtype=np.int64).T
            src_v[np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))] = -1.0
        rows = np.column_stack([np.array(n_pos, np.int64), np.array(n_neg, np.int64)]).ravel()
        is_pos = np.repeat(np.tile([True, False], n), rows)
        owner = np.repeat(np.arange(n), rows.reshape(n, 2).sum(axis=1))
        s = self.scores
        pairs = PairStack(n, (s[is_pos], tv[is_pos], owner[is_pos]),
                          (s[~is_pos], tv[~is_pos], owner[~is_pos]), np.array(soft, dtype=bool))  # fmt: skip
        return CafeBatch(
            n, pairs, np.array(self.pair_bits, dtype=np.int64), self.missing, self.key, self.bit,
            self.shared, self.table, np.array(self.start, dtype=np.int64),
            np.array(self.length, dtype=np.int64), np.array(self.gt, dtype=bool),
            np.concatenate([s, np.array(self.extra_s, np.float64)]),
            np.concatenate([src_v, np.array(self.extra_v, np.float64)]),
        )  # fmt: skip
