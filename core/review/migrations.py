r"""The review store's schema, versioned with ``PRAGMA user_version``: :data:`MIGRATIONS`\[i]
upgrades a store from version i to i + 1."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable

from masklens.core.review.corrections import create_tables


def _v1(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE verdicts ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " benchmark TEXT NOT NULL, sample_id TEXT NOT NULL, prompt_id TEXT NOT NULL DEFAULT '',"
        " verdict TEXT NOT NULL, note TEXT NOT NULL DEFAULT '', reviewer TEXT NOT NULL,"
        " time TEXT NOT NULL)"
    )


def _v2(db: sqlite3.Connection) -> None:
    # v2: a random uid per row (idempotent merges) and an index for "current verdict" queries
    db.execute("ALTER TABLE verdicts ADD COLUMN uid TEXT")
    for (rowid,) in db.execute("SELECT id FROM verdicts WHERE uid IS NULL").fetchall():
        db.execute("UPDATE verdicts SET uid = ? WHERE id = ?", (uuid.uuid4().hex, rowid))
    db.execute("CREATE UNIQUE INDEX verdicts_uid ON verdicts(uid)")
    db.execute("CREATE INDEX verdicts_key ON verdicts(benchmark, sample_id, prompt_id, reviewer)")


def _v3(db: sqlite3.Connection) -> None:
    # v3: retraction rows (undo): ``retracts`` holds the uid of the row they take back
    db.execute("ALTER TABLE verdicts ADD COLUMN retracts TEXT NOT NULL DEFAULT ''")


def _v4(db: sqlite3.Connection) -> None:
    # v4: ground-truth corrections and reviewers' queues (core/review/corrections.py, assign.py)
    create_tables(db)


#: MIGRATIONS[i] upgrades a store from user_version i to i + 1
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_v1, _v2, _v3, _v4]
SCHEMA_VERSION = len(MIGRATIONS)
