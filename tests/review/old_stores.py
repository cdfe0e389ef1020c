"""Review stores as an older masklens wrote them, for the tests that read them."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

from masklens.core.review.migrations import MIGRATIONS

BENCH = "cafe:demo"


def old_store(path: Path, version: int = 2, *, rows: int = 3, journal: str = "delete") -> Path:
    """A closed store of schema ``version`` (1–4) holding ``rows`` verdicts, in ``journal`` mode
    (older masklens wrote rollback-journal stores; current ones are WAL)."""
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA journal_mode = {journal}")
    for step in MIGRATIONS[:version]:
        step(db)
    cols = "benchmark, sample_id, prompt_id, verdict, note, reviewer, time" + (", uid" if version >= 2 else "")
    for i in range(rows):
        vals = [BENCH, f"s{i}", "", "model_wrong", "", f"r{i % 2}", f"2026-01-0{i + 1}T00:00:00.000Z"]
        if version >= 2:
            vals.append(uuid.uuid4().hex)
        db.execute(f"INSERT INTO verdicts ({cols}) VALUES ({', '.join('?' * len(vals))})", vals)
    db.execute(f"PRAGMA user_version = {version}")
    db.commit()
    db.close()
    return path
