"""`masklens review check`: SQLite's integrity check plus the review schema, without changing the file."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from masklens.core.files.sqlite_errors import is_sqlite_file, require_existing
from masklens.core.review.connections import connect_read_only
from masklens.core.review.migrations import SCHEMA_VERSION
from masklens.core.review.reading import ADDED_LATER, blob_cells
from masklens.core.review.verdicts import FIELDS


@dataclass
class CheckResult:
    """What :func:`check_review_db` found: ``problems`` is empty for a sound store."""

    path: Path
    problems: list[str] = field(default_factory=list)
    schema_version: int | None = None
    rows: int | None = None
    #: written by a newer masklens (its schema is not this one's to judge)
    newer: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems


def check_review_db(path: str | Path) -> CheckResult:
    """Run ``PRAGMA integrity_check`` and check the verdicts table of a review database, opened
    read-only (a missing or 0-byte file raises MasklensError; nothing is created or repaired)."""
    from masklens.core.review.store import store_path

    p = store_path(path)
    require_existing(p, "review database")
    out = CheckResult(p)
    if not is_sqlite_file(p):
        out.problems.append("not an SQLite file (its header is not 'SQLite format 3')")
        return out
    try:
        db = connect_read_only(p, 5.0)
    except sqlite3.Error as exc:
        out.problems.append(f"cannot open: {exc}")
        return out
    try:
        _run(out, db)
    finally:
        db.close()
    return out


def _run(out: CheckResult, db: sqlite3.Connection) -> None:
    try:
        rows = [r[0] for r in db.execute("PRAGMA integrity_check(100)")]
    except sqlite3.Error as exc:
        out.problems.append(f"integrity check failed to run: {exc}")
        return
    if rows != ["ok"]:
        out.problems += [f"integrity: {r}" for r in rows]
    try:
        out.schema_version = int(db.execute("PRAGMA user_version").fetchone()[0])
        cols = {r[1] for r in db.execute("PRAGMA table_info(verdicts)")}
    except sqlite3.Error as exc:
        out.problems.append(f"cannot read the schema: {exc}")
        return
    if not cols:
        out.problems.append("the 'verdicts' table is missing")
        return
    older = out.schema_version is not None and out.schema_version < SCHEMA_VERSION
    missing = [f for f in FIELDS if f not in cols and not (older and f in ADDED_LATER)]
    if missing:
        out.problems.append(f"the 'verdicts' table lacks column(s) {', '.join(missing)}")
    if out.schema_version is not None and out.schema_version > SCHEMA_VERSION:
        if rows == ["ok"]:  # sound as SQLite: only this masklens is too old for it
            out.newer = True
        out.problems.append(f"schema version {out.schema_version} is newer than this masklens "
                            f"({SCHEMA_VERSION})")
        return
    if (out.schema_version or 0) >= 4:  # v4: corrections and assignments (core/review/corrections.py)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        out.problems += [f"the '{t}' table is missing" for t in ("corrections", "assignments")
                         if t not in tables]
    try:
        out.rows = int(db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0])
        for _ in db.execute(f"SELECT {', '.join(c for c in FIELDS if c in cols)} FROM verdicts"):
            pass  # every row readable
        out.problems += blob_cells(db, [c for c in FIELDS if c in cols])
    except sqlite3.Error as exc:
        out.problems.append(f"cannot read every verdict: {exc}")
    out.problems += _bad_cells(out.path, db)


#: bad cells named per table at most
_LIMIT = 20


def _bad_cells(path: Path, db: sqlite3.Connection) -> list[str]:
    """Every cell of the corrections and assignments tables read as the commands read them:
    "TABLE row id N: field 'x' …" per bad cell (at most :data:`_LIMIT` per table)."""
    from masklens.core.errors import DataFormatError
    from masklens.core.review.corrections import COLUMNS, from_row
    from masklens.core.review.reading import ASSIGNMENT_COLUMNS, assignment_row

    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    readers = {"corrections": (COLUMNS, lambda rid, r: from_row(r, path=path, row_id=rid)),
               "assignments": (ASSIGNMENT_COLUMNS, lambda rid, r: assignment_row(path, rid, r))}
    problems: list[str] = []
    for table, (columns, read) in readers.items():
        if table not in tables:
            continue
        found = 0
        try:
            for row in db.execute(f"SELECT id, {', '.join(columns)} FROM {table} ORDER BY id"):
                try:
                    read(row[0], row[1:])
                except DataFormatError as exc:
                    found += 1
                    problems.append(f"{table} row id {row[0]}: field '{exc.field}' {exc.detail}")
                    if found >= _LIMIT:
                        break
        except sqlite3.Error as exc:
            problems.append(f"cannot read every row of '{table}': {exc}")
    return problems
