"""Reviewers' verdicts in SQLite: never lost, safe with several windows, exportable, mergeable.

A verdict says what a reviewer found on one sample (or one prompt of it): the
model was wrong, the ground truth was wrong, the prompt is ambiguous, the
counterfactual edit is invalid, or all is fine. The store is a SQLite file
beside the user's data (:func:`default_store_path`) in WAL mode with a busy
timeout, so two windows or processes can write to it at once; every verdict is
committed (``synchronous=FULL``) the moment it is recorded, so a crash loses
nothing already recorded. Rows are append-only: the current verdict of a
(benchmark, sample, prompt, reviewer) is its latest row, a cleared verdict is a
row with an empty ``verdict``, and an undone verdict is followed by a *retraction* row
(``retracts`` = the undone row's uid): nothing is ever deleted, and every reading
(:meth:`ReviewStore.current`, exports, κ) treats a retracted row as absent. Each row has a random ``uid`` so merging stores
from several reviewers is idempotent. The schema is versioned with
``PRAGMA user_version`` and upgraded by :data:`MIGRATIONS`.

Qt-free; the GUI's review panel and ``masklens review`` both use this module.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path

from masklens.core.errors import DataFormatError, MasklensError
from masklens.core.files.io import atomic_write_json, atomic_write_text
from masklens.core.files.safe_csv import csv_text
from masklens.core.files.sqlite_errors import (
    StoreErrors,
    is_sqlite_file,
    require_existing,
    rollback_quietly,
)
from masklens.core.review.assign import QueueRows
from masklens.core.review.locations import (  # noqa: F401 - importable from here, as before
    benchmark_key,
    default_store_path,
    is_bundled,
)
from masklens.core.review.migrations import MIGRATIONS, SCHEMA_VERSION
from masklens.core.review.store_corrections import CorrectionRows

# the verdict types live in their own module (re-exported: the GUI, reports and tests read them here)
from masklens.core.review.verdict_types import (  # noqa: F401
    VERDICT_TYPES,
    VerdictType,
    excluding_verdicts,
    register_verdict_type,
    verdict_type,
)
from masklens.core.review.verdicts import FIELDS, Verdict, _where, effective  # noqa: F401 - as before


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ------------------------------------------------------------------ store
class ReviewStore(CorrectionRows, QueueRows):
    """Verdicts, ground-truth corrections (:class:`CorrectionRows`) and reviewers' queues
    (:class:`QueueRows`) of one SQLite file. Thread-safe; each ``record`` and
    ``add_correction`` is its own committed transaction."""

    def __init__(
        self, path: str | Path, *, reviewer: str | None = None, timeout: float = 15.0,
        create: bool = True, read_only: bool = False,
    ) -> None:
        """Open (with ``create``: create or upgrade) the store at ``path``. With
        ``create=False`` a missing, empty (0-byte) or non-masklens file is an error, never
        silently turned into a new database. ``read_only=True`` (what reading commands use)
        opens it without changing it in any way (no upgrade, no WAL switch; a file the user may
        read but not write is fine; an older schema is read as it is). SQLite errors become
        clear messages (:class:`~masklens.core.files.sqlite_errors.StoreErrors`)."""
        self.path = Path(path)
        self.reviewer = reviewer or _default_reviewer()
        self._lock = threading.RLock()
        self._error = StoreErrors(self.path, "review database",
                                  f"run `masklens review check {self.path}`")
        self.read_only = read_only
        self._columns = ", ".join(FIELDS)
        if read_only:
            self._open_read_only(timeout)
            return
        if not create:
            require_existing(self.path, "review database")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MasklensError(f"cannot create the folder ({exc.strerror})", path=self.path.parent) from None
        if self.path.is_file() and self.path.stat().st_size and not is_sqlite_file(self.path):
            raise DataFormatError(
                "not a usable review database (not an SQLite file)", path=self.path,
                hint="verdicts are stored in SQLite files written by masklens",
            )
        try:
            self._db = sqlite3.connect(
                str(self.path), timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise self._error(exc, "opening") from None
        try:
            self._db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            self._db.execute("PRAGMA synchronous = FULL")
            if not create and self._db.execute("PRAGMA user_version").fetchone()[0] == 0:
                raise DataFormatError(
                    "not a masklens review database (no verdicts schema)", path=self.path,
                    hint="verdicts are stored in SQLite files written by masklens",
                )
            self._migrate()
        except sqlite3.Error as exc:
            self._db.close()
            raise self._error(exc, "opening") from None
        except BaseException:
            self._db.close()
            raise
        self.journal_mode = str(mode).lower()

    def _open_read_only(self, timeout: float) -> None:
        from masklens.core.review.reading import connect_read_only, select_columns

        require_existing(self.path, "review database")
        if not is_sqlite_file(self.path):
            raise DataFormatError("not a usable review database (not an SQLite file)", path=self.path,
                                  hint="verdicts are stored in SQLite files written by masklens")
        try:
            self._db = connect_read_only(self.path, timeout)
            version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
            if version == 0:
                raise DataFormatError("not a masklens review database (no verdicts schema)", path=self.path,
                                      hint="verdicts are stored in SQLite files written by masklens")
            if version > SCHEMA_VERSION:
                raise newer_schema(self.path, version)
            cols = {r[1] for r in self._db.execute("PRAGMA table_info(verdicts)")}
            if cols:  # no table at all: reading reports the damage
                self._columns = select_columns(cols, FIELDS, path=self.path)
            self.journal_mode = str(self._db.execute("PRAGMA journal_mode").fetchone()[0]).lower()
        except sqlite3.Error as exc:
            self._db.close()
            raise self._error(exc, "opening") from None
        except BaseException:
            if hasattr(self, "_db"):
                self._db.close()
            raise

    @contextlib.contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        """sqlite3 errors inside become clear messages (disk full, damaged, locked …)."""
        try:
            yield
        except sqlite3.Error as exc:
            raise self._error(exc, action) from None

    # -------------------------------------------------------------- lifecycle
    def _migrate(self) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                version = self._db.execute("PRAGMA user_version").fetchone()[0]
                if version > SCHEMA_VERSION:
                    raise newer_schema(self.path, version)
                for step in range(version, SCHEMA_VERSION):
                    MIGRATIONS[step](self._db)
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                self._db.execute("COMMIT")
            except BaseException:
                rollback_quietly(self._db)
                raise

    @property
    def schema_version(self) -> int:
        with self._lock, self._guard("reading"):
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> ReviewStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------------------- writing
    def record(
        self,
        benchmark: str,
        sample_id: str,
        verdict: str,
        *,
        prompt_id: str | None = None,
        note: str = "",
        reviewer: str | None = None,
    ) -> Verdict:
        """Record (and commit) one verdict; ``verdict=""`` clears the current one."""
        if verdict:
            verdict_type(verdict)
        v = Verdict(
            benchmark=str(benchmark),
            sample_id=str(sample_id),
            prompt_id=str(prompt_id or ""),
            verdict=verdict,
            note=note or "",
            reviewer=reviewer or self.reviewer,
            time=_utc_now(),
            uid=uuid.uuid4().hex,
        )
        self._insert([v])
        return v

    def clear(self, benchmark: str, sample_id: str, *, prompt_id: str | None = None) -> Verdict:
        return self.record(benchmark, sample_id, "", prompt_id=prompt_id)

    def retract(self, verdict: Verdict) -> Verdict:
        """Undo ``verdict`` (a row of this store) by appending a retraction row: the row stays in
        the history, every reading treats it as absent, and the verdict before it is current again."""
        if verdict.retracts:
            raise MasklensError("a retraction cannot itself be retracted", path=self.path,
                                hint="record the verdict again instead")
        r = Verdict(
            benchmark=verdict.benchmark,
            sample_id=verdict.sample_id,
            prompt_id=verdict.prompt_id,
            verdict="",
            note="",
            reviewer=verdict.reviewer,
            time=_utc_now(),
            uid=uuid.uuid4().hex,
            retracts=verdict.uid,
        )
        self._insert([r])
        return r

    def _insert(self, rows: Iterable[Verdict]) -> int:
        if self.read_only:
            raise MasklensError("this review database was opened read-only", path=self.path)
        sql = (
            "INSERT OR IGNORE INTO verdicts (benchmark, sample_id, prompt_id, verdict, note,"
            " reviewer, time, uid, retracts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        )
        return self._write(sql, [tuple(getattr(r, f) for f in FIELDS) for r in rows])

    def _write(self, sql: str, values: list[tuple]) -> int:
        """Run ``sql`` over ``values`` in one committed transaction; returns the rows changed."""
        with self._lock, self._guard("writing"):
            before = self._db.total_changes
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(sql, values)
                self._db.execute("COMMIT")
            except BaseException:
                rollback_quietly(self._db)  # a full disk may have ended the transaction already
                raise
            return self._db.total_changes - before

    def merge(self, *others: str | Path) -> int:
        """Copy every verdict, correction and assignment of other stores (opened read-only, never
        changed) into this one; returns the verdict and correction rows added. Idempotent: a
        verdict row without a uid (an edited or foreign store) gets one derived from its content.
        Verdict rows with an empty required field are not copied: they are counted per store in
        :attr:`merge_skipped`."""
        from masklens.core.review.reading import content_uid, missing_required

        added = 0
        self.merge_skipped: dict[str, int] = {}
        for other in others:
            with ReviewStore(other, reviewer=self.reviewer, read_only=True) as src:
                rows, skipped = [], 0
                for v in src.history():
                    if missing_required(v):
                        skipped += 1
                        continue
                    rows.append(v if v.uid else replace(v, uid=content_uid(v)))
                added += self._insert(rows)
                if skipped:
                    self.merge_skipped[str(other)] = skipped
                added += self._insert_corrections(src.correction_history())
                self._insert_assignments(src._assignment_rows())
        return added

    # -------------------------------------------------------------- reading
    def _has_table(self, name: str) -> bool:
        """Whether the file has the table: a store of an older schema opened read-only (never
        upgraded) has no corrections or assignments, and reads as having none."""
        with self._lock, self._guard("reading"):
            return self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                                    (name,)).fetchone() is not None

    def history(
        self, benchmark: str | None = None, *, reviewer: str | None = None
    ) -> list[Verdict]:
        """Every row, oldest first (optionally of one benchmark / reviewer)."""
        from masklens.core.review.reading import as_text

        where, args = _where(benchmark=benchmark, reviewer=reviewer)
        with self._lock, self._guard("reading"):
            rows = self._db.execute(
                f"SELECT id, {self._columns} FROM verdicts {where} ORDER BY time, id", args
            ).fetchall()
        return [Verdict(*as_text(self.path, r[0], r[1:], FIELDS)) for r in rows]

    def current(
        self, benchmark: str | None = None, *, reviewer: str | None = None
    ) -> list[Verdict]:
        """The latest verdict per (benchmark, sample, prompt, reviewer), cleared ones left out;
        retracted rows (and the retractions themselves) count as absent."""
        latest: dict[tuple[str, str, str, str], Verdict] = {}
        for v in effective(self.history(benchmark, reviewer=reviewer)):
            latest[v.key] = v
        return [v for v in latest.values() if v.verdict]

    def verdict_of(
        self, benchmark: str, sample_id: str, prompt_id: str | None = None,
        *, reviewer: str | None = None,
    ) -> Verdict | None:
        """This reviewer's current verdict on a sample (or prompt), or None."""
        who = reviewer or self.reviewer
        with self._lock, self._guard("reading"):
            row = self._db.execute(
                f"SELECT {', '.join(FIELDS)} FROM verdicts WHERE benchmark = ? AND sample_id = ?"
                " AND prompt_id = ? AND reviewer = ? AND retracts = '' AND uid NOT IN"
                " (SELECT retracts FROM verdicts WHERE retracts != '')"
                " ORDER BY time DESC, id DESC LIMIT 1",
                (benchmark, sample_id, prompt_id or "", who),
            ).fetchone()
        if row is None or not row[3]:
            return None
        return Verdict(*row)

    def sample_verdicts(self, benchmark: str) -> dict[str, list[Verdict]]:
        """sample id -> its current verdicts (all reviewers, sample- and prompt-level)."""
        out: dict[str, list[Verdict]] = {}
        for v in self.current(benchmark):
            out.setdefault(v.sample_id, []).append(v)
        return out

    def reviewed_samples(self, benchmark: str, *, reviewer: str | None = None) -> set[str]:
        return {v.sample_id for v in self.current(benchmark, reviewer=reviewer)}

    def reviewers(self, benchmark: str | None = None) -> list[str]:
        return sorted({v.reviewer for v in self.current(benchmark)})

    def benchmarks(self) -> list[str]:
        return sorted({v.benchmark for v in self.history()})

    # -------------------------------------------------------------- export
    def export(
        self, out: str | Path, *, benchmark: str | None = None, history: bool = False
    ) -> Path:
        """Write the current verdicts (or the whole history) as CSV or JSON (by suffix), atomically."""
        p = Path(out)
        rows = self.history(benchmark) if history else self.current(benchmark)
        records = [asdict(v) for v in rows]
        if p.suffix.lower() == ".json":
            atomic_write_json(p, {"schema_version": SCHEMA_VERSION, "verdicts": records})
        elif p.suffix.lower() == ".csv":
            atomic_write_text(p, csv_text(records, list(FIELDS)))
        else:
            raise MasklensError("export file must end in .csv or .json", path=p)
        return p


def newer_schema(path: Path, version: int) -> MasklensError:
    """The error for a store written by a newer masklens (not damaged: this one cannot read it)."""
    return MasklensError(
        f"made by a newer masklens (review schema version {version}; this masklens reads up to "
        f"{SCHEMA_VERSION})", path=path, hint="upgrade masklens to open it; the file was left as it is")


def _default_reviewer() -> str:
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in some containers
        return "reviewer"
