"""Review stores as a hostile hand, a disk or a crash leaves them, for the tests that read them
(the corrections tests and the hostile matrix, tests/hardening/hostile_matrix.py)."""

from __future__ import annotations

import os
import random
import sqlite3
from pathlib import Path

#: an UPDATE of the corrections table's one row -> the column the error must name
HOSTILE_CELLS = {
    "instance = 'abc'": "instance", "instance = x'0102'": "instance", "instance = 0.5": "instance",
    "instance = -1": "instance",
    "mask = '" + "[" * 100_000 + "]" * 100_000 + "'": "mask", "mask = 'not json'": "mask",
    "category = '" + '{"a":' * 5_000 + "1" + "}" * 5_000 + "'": "category",
    "time = x'ff00'": "time", "tool = x'ff00'": "tool", "reviewer = x'ff00'": "reviewer",
    "reviewer = NULL": "reviewer", "sample_id = x'ff'": "sample_id",
}


#: an UPDATE of the verdicts table's rows (text cells hold what a hand or another tool put there)
VERDICT_CELLS = ("reviewer = NULL", "time = x'ff00'", "verdict = 7", "sample_id = x'ff'")


def short(cell: str) -> str:
    """A readable name of a hostile cell (the 100,000-deep mask is not)."""
    column, _, value = cell.partition(" = ")
    return f"{column} = {value[:12]}{'…' if len(value) > 12 else ''}"


def spoil_cell(path: Path, cell: str, table: str = "corrections") -> None:
    """Put the hostile ``cell`` into every row of the store's ``table`` (the table is copied
    without its NOT NULL constraints first, so that NULL can be stored too)."""
    db = sqlite3.connect(path)
    db.execute(f"CREATE TABLE spoiled AS SELECT * FROM {table}")
    db.execute(f"DROP TABLE {table}")
    db.execute(f"ALTER TABLE spoiled RENAME TO {table}")
    db.execute(f"UPDATE {table} SET {cell}")
    db.commit()
    db.close()


def rollback_journal(path: Path) -> None:
    """The store in rollback-journal mode, as older masklens and other tools leave it."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = DELETE")
    db.close()


def truncate(path: Path, size: int) -> None:
    with path.open("r+b") as fh:
        fh.truncate(size)


def garbage_on_page_one(path: Path, seed: int = 7) -> None:
    """Random bytes over page 1 after the 100-byte header (the schema lives there)."""
    rng = random.Random(seed)
    with path.open("r+b") as fh:
        fh.seek(100)
        fh.write(bytes(rng.randrange(256) for _ in range(4096 - 100)))
        fh.flush()
        os.fsync(fh.fileno())
