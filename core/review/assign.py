"""Review as a team: a benchmark's samples split into per-reviewer queues with a shared overlap.

:func:`split_queues` is deterministic for a seed: the samples are shuffled, a share
``overlap`` of them (rounded, at least one when ``overlap`` > 0 and there are two reviewers)
goes to *every* reviewer (those items give the agreement statistics), and the rest is dealt
round-robin, so queues differ in length by at most one. Each queue keeps the shuffled order.
The store keeps each assignment as a batch of rows (:class:`QueueRows`); the latest batch of a
benchmark is the one in force.
"""

from __future__ import annotations

import random
import uuid
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


class QueueRows:
    """``assignments`` table access (a mixin of ReviewStore; needs ``_db``, ``_lock``,
    ``_guard``, ``_write``)."""

    def assign(
        self, benchmark: str, sample_ids: Sequence[str], reviewers: Sequence[str], *,
        overlap: float = 0.0, seed: int = 0,
    ) -> dict[str, list[QueueItem]]:
        """Split ``sample_ids`` into queues (:func:`split_queues`) and store them as the
        benchmark's assignment in force (one committed transaction); returns the queues."""
        from masklens.core.review.store import _utc_now

        queues = split_queues(sample_ids, reviewers, overlap=overlap, seed=seed)
        batch, now = uuid.uuid4().hex, _utc_now()
        rows = [(batch, benchmark, r, i, q.sample_id, int(q.shared), seed, now)
                for r, items in queues.items() for i, q in enumerate(items)]
        self._insert_assignments(rows)
        return queues

    def _insert_assignments(self, rows: list[tuple]) -> int:
        return self._write(
            "INSERT OR IGNORE INTO assignments (batch, benchmark, reviewer, position, sample_id,"
            " shared, seed, time) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def _assignment_rows(self) -> list[tuple]:
        if not self._has_table("assignments"):
            return []
        with self._lock, self._guard("reading"):
            return self._db.execute(
                "SELECT batch, benchmark, reviewer, position, sample_id, shared, seed, time"
                " FROM assignments ORDER BY id").fetchall()

    def _batch(self, benchmark: str) -> str | None:
        if not self._has_table("assignments"):
            return None
        with self._lock, self._guard("reading"):
            row = self._db.execute(
                "SELECT batch FROM assignments WHERE benchmark = ? ORDER BY time DESC, id DESC"
                " LIMIT 1", (benchmark,)).fetchone()
        return None if row is None else row[0]

    def assigned_reviewers(self, benchmark: str) -> list[str]:
        """The reviewers of the benchmark's assignment in force (none when not assigned)."""
        batch = self._batch(benchmark)
        if batch is None:
            return []
        with self._lock, self._guard("reading"):
            return [r[0] for r in self._db.execute(
                "SELECT DISTINCT reviewer FROM assignments WHERE batch = ? ORDER BY reviewer",
                (batch,))]

    def queue(self, benchmark: str, reviewer: str | None = None) -> list[str]:
        """The reviewer's queue of sample ids in the assignment in force ([] when none)."""
        return [i.sample_id for i in self.queue_items(benchmark, reviewer)]

    def queue_items(self, benchmark: str, reviewer: str | None = None) -> list[QueueItem]:
        batch = self._batch(benchmark)
        if batch is None:
            return []
        with self._lock, self._guard("reading"):
            rows = self._db.execute(
                "SELECT sample_id, shared FROM assignments WHERE batch = ? AND reviewer = ?"
                " ORDER BY position", (batch, reviewer or self.reviewer)).fetchall()
        return [QueueItem(s, bool(sh)) for s, sh in rows]

    def progress(self, benchmark: str, reviewer: str | None = None) -> tuple[int, int]:
        """(done, total) of the reviewer's queue: done = queued samples with a current verdict
        or an effective correction by that reviewer."""
        who = reviewer or self.reviewer
        queue = self.queue(benchmark, who)
        seen = self.reviewed_samples(benchmark, reviewer=who)
        seen |= {c.sample_id for c in self.corrections(benchmark, reviewer=who)}
        return sum(1 for s in queue if s in seen), len(queue)
