"""One verdict on many samples at once (the window's gallery): one row per sample, as if
recorded one by one, written in one transaction — all of them or none — and taken back the
same way (one retraction row each)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace

from masklens.core.review.store import ReviewStore, Verdict, _utc_now, verdict_type


def record_batch(store: ReviewStore, benchmark: str, sample_ids: Sequence[str], verdict: str,
                 *, reviewer: str | None = None, note: str = "") -> list[Verdict]:
    """Record ``verdict`` (``""`` clears) on each whole sample of ``sample_ids``; returns the rows."""
    if verdict:
        verdict_type(verdict)
    now = _utc_now()
    rows = [Verdict(benchmark=str(benchmark), sample_id=str(sid), prompt_id="", verdict=verdict,
                    note=note, reviewer=reviewer or store.reviewer, time=now, uid=uuid.uuid4().hex)
            for sid in sample_ids]
    store._insert(rows)  # noqa: SLF001 - the store's own one-transaction writer
    return rows


def retract_batch(store: ReviewStore, verdicts: Sequence[Verdict]) -> list[Verdict]:
    """Undo ``verdicts`` (rows of ``store``): one retraction row each, in one transaction."""
    now = _utc_now()
    rows = [replace(v, verdict="", note="", time=now, uid=uuid.uuid4().hex, retracts=v.uid)
            for v in reversed(verdicts)]
    store._insert(rows)  # noqa: SLF001
    return rows
