"""Reads the window needs on every sample switch, sized by the sample, not by the store: one
sample's current verdicts (the store's index on benchmark and sample), and a stamp that changes
whenever a row is added (so a summary over the whole store is computed again only then)."""

from __future__ import annotations

from masklens.core.review.store import FIELDS, ReviewStore, Verdict, effective


def sample_current(store: ReviewStore, benchmark: str, sample_id: str) -> list[Verdict]:
    """The current verdicts on one sample (all reviewers, sample- and prompt-level), as
    ``store.sample_verdicts(benchmark).get(sample_id, [])`` gives them."""
    with store._lock, store._guard("reading"):  # noqa: SLF001 - the store's own connection and guard
        rows = store._db.execute(  # noqa: SLF001
            f"SELECT {', '.join(FIELDS)} FROM verdicts WHERE benchmark = ? AND sample_id = ?"
            " ORDER BY time, id", (benchmark, sample_id)).fetchall()
    latest: dict[tuple[str, str, str, str], Verdict] = {}
    for v in effective(Verdict(*r) for r in rows):
        latest[v.key] = v
    return [v for v in latest.values() if v.verdict]


def stamp(store: ReviewStore) -> tuple[int, int]:
    """(rows, largest row id): changes whenever a verdict, a clear or a retraction is added,
    by this window or another process."""
    with store._lock, store._guard("reading"):  # noqa: SLF001
        n, top = store._db.execute("SELECT COUNT(*), MAX(id) FROM verdicts").fetchone()  # noqa: SLF001
    return int(n), int(top or 0)
