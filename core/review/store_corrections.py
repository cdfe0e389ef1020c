"""The review store's corrections methods (a mixin of :class:`~masklens.core.review.store.ReviewStore`).

Each :meth:`add_correction` is its own committed transaction (WAL, ``synchronous=FULL``, as
verdicts): once it returns, a crash loses nothing. Rows are append-only; merging copies them by
their uid (idempotent). The correction logic itself is in :mod:`masklens.core.review.corrections`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from masklens.core.errors import MasklensError
from masklens.core.masks import Mask
from masklens.core.review.corrections import (
    COLUMNS,
    Correction,
    effective_corrections,
    from_row,
    to_row,
)


class CorrectionRows:
    """``corrections`` table access; needs the store's ``_db``, ``_lock``, ``_guard``,
    ``_write``, ``reviewer`` and ``path``."""

    def add_correction(
        self,
        benchmark: str,
        sample_id: str,
        gt_key: str,
        instance: int | None,
        mask: Mask | None,
        *,
        tool: str = "",
        note: str = "",
        verdict_uid: str = "",
        category: Any = None,
        reviewer: str | None = None,
    ) -> Correction:
        """Record (and commit) one correction: ``mask`` replaces instance ``instance`` of ground
        truth ``gt_key`` (``instance=None``: a new instance; ``mask=None``: delete it)."""
        from masklens.core.review.store import _utc_now

        if instance is None and mask is None:
            raise MasklensError("a new instance needs a mask", path=self.path, field="mask")
        if instance is not None and (isinstance(instance, bool) or int(instance) < 0):
            raise MasklensError(f"instance must be an index ≥ 0, got {instance!r}",
                                path=self.path, field="instance")
        if mask is not None and not isinstance(mask, Mask):
            raise TypeError(f"mask must be a Mask or None, got {type(mask).__name__}")
        c = Correction(
            benchmark=str(benchmark), sample_id=str(sample_id), gt_key=str(gt_key),
            instance=None if instance is None else int(instance), mask=mask, tool=tool or "",
            reviewer=reviewer or self.reviewer, time=_utc_now(), note=note or "",
            verdict_uid=verdict_uid or "", uid=uuid.uuid4().hex, category=category,
        )
        self._insert_corrections([c])
        return c

    def retract_correction(self, correction: Correction) -> Correction:
        """Undo ``correction`` by appending a retraction row (the row stays in the history;
        every reading treats it as absent, so the correction before it is effective again)."""
        from masklens.core.review.store import _utc_now

        if correction.retracts:
            raise MasklensError("a retraction cannot itself be retracted", path=self.path,
                                hint="record the correction again instead")
        r = Correction(
            benchmark=correction.benchmark, sample_id=correction.sample_id,
            gt_key=correction.gt_key, instance=correction.instance, mask=None, tool="",
            reviewer=correction.reviewer, time=_utc_now(), note="", verdict_uid="",
            uid=uuid.uuid4().hex, retracts=correction.uid,
        )
        self._insert_corrections([r])
        return r

    def _insert_corrections(self, rows: Iterable[Correction]) -> int:
        sql = (f"INSERT OR IGNORE INTO corrections ({', '.join(COLUMNS)})"
               f" VALUES ({', '.join('?' * len(COLUMNS))})")
        return self._write(sql, [to_row(c) for c in rows])

    def correction_history(
        self, benchmark: str | None = None, *, reviewer: str | None = None
    ) -> list[Correction]:
        """Every correction row (retractions included), oldest first."""
        from masklens.core.review.store import _where

        if not self._has_table("corrections"):
            return []
        where, args = _where(benchmark=benchmark, reviewer=reviewer)
        with self._lock, self._guard("reading"):
            rows = self._db.execute(
                f"SELECT {', '.join(COLUMNS)} FROM corrections {where} ORDER BY time, id", args
            ).fetchall()
        return [from_row(r, path=self.path) for r in rows]

    def corrections(
        self, benchmark: str | None = None, *, reviewer: str | None = None
    ) -> list[Correction]:
        """The effective corrections (retractions applied, the last per sample, ground truth,
        instance and reviewer; every added instance kept), oldest first."""
        return effective_corrections(self.correction_history(benchmark, reviewer=reviewer))
