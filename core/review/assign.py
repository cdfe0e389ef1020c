"""Review as a team: a benchmark's samples split into per-reviewer queues with a shared overlap.

:func:`split_queues` is deterministic for a seed: the samples are shuffled, a share
``overlap`` of them (rounded, at least one when ``overlap`` > 0 and there are two reviewers)
goes to *every* reviewer (those items give the agreement statistics), and the rest is dealt
round-robin, so queues differ in length by at most one. Each queue keeps the shuffled order.
The store keeps each assignment as a batch of rows
(:meth:`ReviewStore.assign <masklens.core.review.store.ReviewStore.assign>`); the latest batch
of a benchmark is the one in force.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from masklens.core.errors import MasklensError


@dataclass(frozen=True)
class QueueItem:
    sample_id: str
    shared: bool  # in every reviewer's queue (the overlap)


def split_queues(
    sample_ids: Sequence[str], reviewers: Sequence[str], *, overlap: float = 0.0, seed: int = 0
) -> dict[str, list[QueueItem]]:
    """Reviewer -> their queue. ``overlap`` in [0, 1]: the share of samples every reviewer sees."""
    names = [r.strip() for r in reviewers if r.strip()]
    if not names:
        raise MasklensError("no reviewer named", field="--reviewers", hint="e.g. --reviewers ana,ben,eve")
    if len(set(names)) != len(names):
        raise MasklensError(f"a reviewer is named twice in {','.join(names)}", field="--reviewers")
    bad = [r for r in names if not _utf8(r)]
    if bad:
        raise MasklensError(f"a reviewer's name has bytes that are not UTF-8: {bad[0]!r}",
                            field="--reviewers", hint="give the names as UTF-8 text")
    if not 0 <= seed < 2**63:
        raise MasklensError(f"seed must be an integer in [0, 2**63), got {seed}", field="--seed")
    if not 0.0 <= overlap <= 1.0:  # NaN fails too
        raise MasklensError(f"overlap must be in [0, 1], got {overlap}", field="--overlap")
    ids = list(dict.fromkeys(str(s) for s in sample_ids))
    rng = random.Random(seed)
    rng.shuffle(ids)
    n_shared = round(overlap * len(ids))
    if overlap > 0 and len(names) > 1 and ids:
        n_shared = max(n_shared, 1)
    shared = set(rng.sample(ids, n_shared))
    queues: dict[str, list[QueueItem]] = {r: [] for r in names}
    turn = 0
    for sid in ids:
        if sid in shared:
            for r in names:
                queues[r].append(QueueItem(sid, True))
        else:
            queues[names[turn % len(names)]].append(QueueItem(sid, False))
            turn += 1
    return queues


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
