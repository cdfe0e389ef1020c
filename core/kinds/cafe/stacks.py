"""CAFE's threshold-free stacks: every pair flattened and the distinct cgF1 image entries.

Built once per overlaps list (the kind caches them): from a :class:`CafeBatch` by gathering
its flat arrays when the list is exactly the pairs of one :func:`all_overlaps` run, else pair
by pair (a subset of samples, a replaced sample). Both give the same stacks, entry for entry.
An entry shared by pairs counts once; entries in no scored pair ride on a sample's
``orphans``. An entry belongs to the group of its own edit type (a negative without one: its
positive's; a positive without one: the groups of its pairs), as the per-subset files of
``run_eval.sh`` list entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from masklens.core.kinds.cafe.batch import GROUP_BITS, CafeBatch
from masklens.core.kinds.cafe.io import GROUPS
from masklens.core.kinds.cafe.metrics import PairStack
from masklens.core.kinds.cafe.stage1 import CafeOverlaps, EntrySource
from masklens.core.kinds.common.cgf1.tables import EntryStack, EntryTable
from masklens.core.schema import Sample


def build_stacks(samples: Sequence[Sample], overlaps: Sequence[CafeOverlaps]) -> dict[str, Any]:
    """The kind's cache: ``entries`` (EntryStack), ``entry_members`` (groups × entries),
    ``pair_members`` (per group, a mask over pairs), ``pairs`` (PairStack), ``missing``."""
    batch = _whole_batch(overlaps)
    if batch is not None:
        entries, key_bits = _batch_entries(batch)
        pairs, codes, missing = batch.pairs, batch.pair_bits, batch.missing
    else:
        entries, key_bits = _entries(samples, overlaps)
        pairs = PairStack.build([o.pair for o in overlaps], [o.static["SoftSwap"] for o in overlaps])
        codes = np.fromiter(
            (GROUP_BITS.get(s.group, 0) for s in samples), dtype=np.int64, count=len(samples)
        )
        missing = sum(o.static["pos_missing"] + o.static["neg_missing"] for o in overlaps)
    entry_members = np.ones((len(GROUPS), len(key_bits)), dtype=bool)
    for g in range(1, len(GROUPS)):
        entry_members[g] = (key_bits >> (g - 1)) & 1 == 1
    return {
        "entries": entries,
        "entry_members": entry_members,
        "pair_members": [codes == codes] + [codes == GROUP_BITS[g] for g in GROUPS[1:]],
        "pairs": pairs,
        "missing": missing,
    }


def _whole_batch(overlaps: Sequence[CafeOverlaps]) -> CafeBatch | None:
    """The run(s) whose pairs ``overlaps`` is, all of each and in order (runs over consecutive
    slices of the samples, e.g. stage 1 in chunks), joined; None otherwise."""
    runs: list[CafeBatch] = []
    i, n = 0, len(overlaps)
    while i < n:
        run = overlaps[i].batch
        if run is None or i + run.n > n:
            return None
        for k in range(run.n):
            o = overlaps[i + k]
            if o.batch is not run or o.index != k:
                return None
        runs.append(run)
        i += run.n
    return CafeBatch.concat(runs) if runs else None


def _entries(samples: Sequence[Sample], overlaps: Sequence[CafeOverlaps]) -> tuple[EntryStack, np.ndarray]:
    """Pair by pair: the distinct entries (first seen first; single-instance ones before
    those with a full table) and their group bits."""
    tables: dict[Any, EntrySource] = {}
    bits: dict[Any, int] = {}  # entry -> bit g - 1 set when it belongs to group GROUPS[g]
    for s, o in zip(samples, overlaps, strict=True):
        pair_bit = GROUP_BITS.get(s.group, 0)
        for (key, counts), table, own in (
            (o.pos_entry, o.pos_table, o.entry_groups[0]),
            (o.neg_entry, o.neg_table, o.entry_groups[1]),
        ):
            if not counts:
                continue
            bit = GROUP_BITS.get(own, 0) if own is not None else pair_bit
            if key in bits:
                bits[key] |= bit if own is None else 0  # an entry shared by pairs
            else:
                tables[key], bits[key] = table, bit
        for key, table, group in o.orphans:
            if key not in bits:
                tables[key], bits[key] = table, GROUP_BITS.get(group, 0)
    single = [k for k, t in tables.items() if not isinstance(t, EntryTable)]
    multi = [k for k, t in tables.items() if isinstance(t, EntryTable)]
    stack = EntryStack.concat(
        [
            EntryStack.from_single([tables[k] for k in single]),  # type: ignore[misc]
            EntryStack.build([tables[k] for k in multi]),  # type: ignore[misc]
        ]
    )
    keys = single + multi
    return stack, np.fromiter(map(bits.__getitem__, keys), dtype=np.int64, count=len(keys))


def _batch_entries(batch: CafeBatch) -> tuple[EntryStack, np.ndarray]:
    """:func:`_entries` from the run's flat candidates (the same entries, order and bits)."""
    keys = batch.cand_key
    if len(set(keys)) == len(keys):  # no entry shared by pairs: every candidate is one
        kept = np.arange(len(keys))
        bits = np.array(batch.cand_bit, dtype=np.int64)
    else:
        first: dict[Any, int] = {}
        acc: list[int] = []
        picked: list[int] = []
        for c, (key, bit, shared) in enumerate(
            zip(keys, batch.cand_bit, batch.cand_shared, strict=True)
        ):
            k = first.get(key)
            if k is None:
                first[key] = len(acc)
                acc.append(bit)
                picked.append(c)
            elif shared:
                acc[k] |= bit  # an entry shared by pairs
        kept = np.array(picked, dtype=np.int64)
        bits = np.array(acc, dtype=np.int64)
    tables = batch.cand_table
    is_multi = np.fromiter((tables[c] is not None for c in kept.tolist()), bool, kept.size)
    single, multi = kept[~is_multi], kept[is_multi]
    lens = batch.cand_len[single]
    rows = np.repeat(batch.cand_start[single] - np.cumsum(lens) + lens, lens) + np.arange(
        int(lens.sum())
    )
    stack = EntryStack.concat(
        [
            single_stack(batch.src_s[rows], batch.src_v[rows], lens, batch.cand_gt[single]),
            EntryStack.build([tables[c] for c in multi.tolist()]),
        ]
    )
    return stack, np.concatenate([bits[~is_multi], bits[is_multi]])


def single_stack(
    s: np.ndarray, iou: np.ndarray, sizes: np.ndarray, has_gt: np.ndarray
) -> EntryStack:
    """``EntryStack.from_single`` from flat arrays: entry e's scores are the next
    ``sizes[e]`` values of ``s``, their IoUs with its one instance those of ``iou`` (-1
    where ``has_gt[e]`` is False). The same arrays, value for value."""
    return EntryStack.from_flat(s, iou, sizes, has_gt)
