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

Every command and the window open a store with :func:`open_store` and a :class:`Role`:
``Role.READ`` changes nothing (no upgrade, no journal switch, nothing left beside the file; a
store in a folder the user cannot write is fine); ``Role.WRITE`` creates or upgrades it, and a
process holds one connection per store file however often it opens it
(:mod:`masklens.core.review.connections`). A :class:`ReviewStore` holds the verdicts, the
ground-truth corrections (:mod:`masklens.core.review.corrections`) and the reviewers' queues
(:mod:`masklens.core.review.assign`) of one file.

Qt-free; the GUI's review panel and ``masklens review`` both use this module.
"""

from __future__ import annotations

import contextlib
import enum
import os
import uuid
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from masklens.core.errors import MasklensError
from masklens.core.files.io import atomic_write_json, atomic_write_text
from masklens.core.files.safe_csv import csv_text
from masklens.core.masks import Mask
from masklens.core.review import connections
from masklens.core.review.assign import QueueItem, split_queues
from masklens.core.review.corrections import (
    COLUMNS,
    Correction,
    effective_corrections,
    from_row,
    to_row,
)
from masklens.core.review.migrations import SCHEMA_VERSION
from masklens.core.review.verdict_types import verdict_type
from masklens.core.review.verdicts import FIELDS, Verdict, effective, where


def utc_now() -> str:
    """The time a row is recorded at: ISO 8601 UTC, milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Role(enum.Enum):
    """What an opened store may do: READ changes nothing, WRITE records."""

    READ = "read"
    WRITE = "write"


def open_store(path: str | os.PathLike[str], role: Role, *, reviewer: str | None = None,
               timeout: float = 15.0) -> ReviewStore:
    """Open the review store at ``path`` for ``role``.

    ``Role.READ``: a missing, empty (0-byte) or non-masklens file is an error; the file, its
    folder and its mtime stay exactly as they were; an older schema is read as it is.
    ``Role.WRITE``: the file is created or upgraded; a store this process already has open
    is shared (one connection per file), and each :meth:`ReviewStore.close` gives one use back.
    SQLite errors become clear messages (:class:`~masklens.core.files.sqlite_errors.StoreErrors`)."""
    if not isinstance(role, Role):
        raise TypeError(f"role must be Role.READ or Role.WRITE, got {role!r}")
    p = store_path(path)
    conn = (connections.acquire_writer(p, timeout) if role is Role.WRITE
            else connections.acquire_reader(p, timeout))
    return ReviewStore(conn, role, reviewer=reviewer)


def store_path(path: str | os.PathLike[str]) -> Path:
    """The local path of a review database; an ``hf://`` path is refused, named as given
    (``Path`` would read it as a folder ``hf:``, and a writer would create that folder)."""
    if os.fspath(path).lower().startswith("hf://"):
        raise MasklensError(f"{os.fspath(path)}: a review database is a local file (hf:// paths "
                            "are for benchmark and prediction files)",
                            hint="download the database and give its local path")
    return Path(path)


# ------------------------------------------------------------------ store
class ReviewStore:
    """Verdicts, ground-truth corrections and reviewers' queues of one SQLite file, opened by
    :func:`open_store`. Thread-safe; each ``record``, ``add_correction`` and ``assign`` is its
    own committed transaction."""

    def __init__(self, connection: connections.Connection, role: Role, *,
                 reviewer: str | None = None) -> None:
        self.path = connection.path
        self.role = role
        self.reviewer = reviewer or _default_reviewer()
        self.journal_mode = connection.journal_mode
        self._conn = connection
        self._db = connection.db
        self._lock = connection.lock
        self._error = connection.errors
        self._columns = connection.verdict_columns
        self._release = weakref.finalize(self, connections.release, connection)

    @property
    def read_only(self) -> bool:
        return self.role is Role.READ

    @contextlib.contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        """sqlite3 errors inside become clear messages (disk full, damaged, locked …)."""
        import sqlite3

        if not self._release.alive:
            raise MasklensError("this review database was closed", path=self.path)
        try:
            yield
        except sqlite3.Error as exc:
            raise self._error(exc, action) from None
        except UnicodeEncodeError as exc:  # a name read from non-UTF-8 command-line bytes
            raise MasklensError(f"a value to look up or record has characters UTF-8 cannot hold "
                                f"({exc.object[exc.start:exc.end]!r} in {exc.object!r:.60}); "
                                "nothing was recorded", path=self.path) from None
        except OverflowError as exc:  # an integer SQLite cannot store (more than 64 bits)
            raise MasklensError(f"a number to record is out of range ({exc}); nothing was recorded",
                                path=self.path) from None

    # -------------------------------------------------------------- lifecycle
    @property
    def schema_version(self) -> int:
        with self._lock, self._guard("reading"):
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def data_version(self) -> int:
        """SQLite's ``data_version`` of this store's connection: it changes when another
        connection — another process, e.g. ``masklens review assign`` or ``merge`` — commits to
        the file, and stays when this process writes (what a window polls to see others' work)."""
        with self._lock, self._guard("reading"):
            return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def close(self) -> None:
        """Give this use of the file's connection back (the last use closes it); idempotent."""
        self._release()

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
            time=utc_now(),
            uid=uuid.uuid4().hex,
        )
        self._insert([v])
        return v

    def record_many(self, benchmark: str, sample_ids: Sequence[str], verdict: str,
                    *, reviewer: str | None = None, note: str = "") -> list[Verdict]:
        """One verdict (``""`` clears) on each whole sample of ``sample_ids``, as if recorded one
        by one, written in one transaction (all of them or none); returns the rows."""
        if verdict:
            verdict_type(verdict)
        now = utc_now()
        rows = [Verdict(benchmark=str(benchmark), sample_id=str(sid), prompt_id="", verdict=verdict,
                        note=note, reviewer=reviewer or self.reviewer, time=now, uid=uuid.uuid4().hex)
                for sid in sample_ids]
        self._insert(rows)
        return rows

    def clear(self, benchmark: str, sample_id: str, *, prompt_id: str | None = None) -> Verdict:
        return self.record(benchmark, sample_id, "", prompt_id=prompt_id)

    def retract(self, verdict: Verdict) -> Verdict:
        """Undo ``verdict`` (a row of this store) by appending a retraction row: the row stays in
        the history, every reading treats it as absent, and the verdict before it is current again."""
        if verdict.retracts:
            raise MasklensError("a retraction cannot itself be retracted", path=self.path,
                                hint="record the verdict again instead")
        return self.retract_many([verdict])[0]

    def retract_many(self, verdicts: Sequence[Verdict]) -> list[Verdict]:
        """Undo ``verdicts`` (rows of this store): one retraction row each, in one transaction."""
        now = utc_now()
        rows = [replace(v, verdict="", note="", time=now, uid=uuid.uuid4().hex, retracts=v.uid)
                for v in reversed(verdicts)]
        self._insert(rows)
        return rows

    def _insert(self, rows: Iterable[Verdict]) -> int:
        sql = (
            "INSERT OR IGNORE INTO verdicts (benchmark, sample_id, prompt_id, verdict, note,"
            " reviewer, time, uid, retracts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        )
        return self._write(sql, [tuple(getattr(r, f) for f in FIELDS) for r in rows])

    def _write(self, sql: str, values: list[tuple]) -> int:
        """Run ``sql`` over ``values`` in one committed transaction; returns the rows changed."""
        from masklens.core.files.sqlite_errors import rollback_quietly

        if self.role is not Role.WRITE:
            raise MasklensError("this review database was opened read-only", path=self.path)
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
            with open_store(other, Role.READ, reviewer=self.reviewer) as src:
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

        clause, args = where(benchmark=benchmark, reviewer=reviewer)
        with self._lock, self._guard("reading"):
            rows = self._db.execute(
                f"SELECT id, {self._columns} FROM verdicts {clause} ORDER BY time, id", args
            ).fetchall()
        return [Verdict(*as_text(self.path, r[0], r[1:], FIELDS)) for r in rows]

    def current(
        self, benchmark: str | None = None, *, reviewer: str | None = None
    ) -> list[Verdict]:
        """The latest verdict per (benchmark, sample, prompt, reviewer), cleared ones left out;
        retracted rows (and the retractions themselves) count as absent."""
        return _latest(self.history(benchmark, reviewer=reviewer))

    def sample_current(self, benchmark: str, sample_id: str) -> list[Verdict]:
        """The current verdicts on one sample (all reviewers, sample- and prompt-level), as
        ``sample_verdicts(benchmark).get(sample_id, [])`` gives them, read by the store's index
        on benchmark and sample (sized by the sample, not by the store)."""
        return _latest(self._sample_rows(benchmark, sample_id))

    def newest_current(self, benchmark: str, sample_id: str, verdict: str) -> Verdict | None:
        """The most recently recorded of the sample's current ``verdict`` verdicts (any reviewer,
        sample- or prompt-level; by time, then by row order), or None."""
        latest: dict[tuple[str, str, str, str], tuple[int, Verdict]] = {}
        for n, v in enumerate(effective(self._sample_rows(benchmark, sample_id))):
            latest[v.key] = (n, v)
        hits = [(n, v) for n, v in latest.values() if v.verdict == verdict]
        return max(hits, key=lambda nv: nv[0])[1] if hits else None

    def _sample_rows(self, benchmark: str, sample_id: str) -> list[Verdict]:
        """One sample's rows, oldest first (by time, then row order)."""
        with self._lock, self._guard("reading"):
            rows = self._db.execute(
                f"SELECT {self._columns} FROM verdicts WHERE benchmark = ? AND sample_id = ?"
                " ORDER BY time, id", (benchmark, sample_id)).fetchall()
        return [Verdict(*r) for r in rows]

    def stamp(self) -> tuple[int, int]:
        """(rows, largest row id): changes whenever a verdict, a clear or a retraction is added,
        by this process or another (a summary of the whole store is computed again only then)."""
        with self._lock, self._guard("reading"):
            n, top = self._db.execute("SELECT COUNT(*), MAX(id) FROM verdicts").fetchone()
        return int(n), int(top or 0)

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

    # -------------------------------------------------------------- corrections
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
            reviewer=reviewer or self.reviewer, time=utc_now(), note=note or "",
            verdict_uid=verdict_uid or "", uid=uuid.uuid4().hex, category=category,
        )
        self._insert_corrections([c])
        return c

    def retract_correction(self, correction: Correction) -> Correction:
        """Undo ``correction`` by appending a retraction row (the row stays in the history;
        every reading treats it as absent, so the correction before it is effective again)."""
        if correction.retracts:
            raise MasklensError("a retraction cannot itself be retracted", path=self.path,
                                hint="record the correction again instead")
        r = Correction(
            benchmark=correction.benchmark, sample_id=correction.sample_id,
            gt_key=correction.gt_key, instance=correction.instance, mask=None, tool="",
            reviewer=correction.reviewer, time=utc_now(), note="", verdict_uid="",
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
        if not self._has_table("corrections"):
            return []
        clause, args = where(benchmark=benchmark, reviewer=reviewer)
        with self._lock, self._guard("reading"):
            rows = self._db.execute(
                f"SELECT id, {', '.join(COLUMNS)} FROM corrections {clause} ORDER BY time, id", args
            ).fetchall()
        return [from_row(r[1:], path=self.path, row_id=r[0]) for r in rows]

    def corrections(
        self, benchmark: str | None = None, *, reviewer: str | None = None
    ) -> list[Correction]:
        """The effective corrections (retractions applied, the last per sample, ground truth,
        instance and reviewer; every added instance kept), oldest first."""
        return effective_corrections(self.correction_history(benchmark, reviewer=reviewer))

    # -------------------------------------------------------------- queues
    def assign(
        self, benchmark: str, sample_ids: Sequence[str], reviewers: Sequence[str], *,
        overlap: float = 0.0, seed: int = 0,
    ) -> dict[str, list[QueueItem]]:
        """Split ``sample_ids`` into queues (:func:`~masklens.core.review.assign.split_queues`)
        and store them as the benchmark's assignment in force (one committed transaction)."""
        queues = split_queues(sample_ids, reviewers, overlap=overlap, seed=seed)
        batch, now = uuid.uuid4().hex, utc_now()
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
        from masklens.core.review.reading import ASSIGNMENT_COLUMNS, assignment_row

        with self._lock, self._guard("reading"):
            rows = self._db.execute(
                f"SELECT id, {', '.join(ASSIGNMENT_COLUMNS)} FROM assignments ORDER BY id").fetchall()
        return [assignment_row(self.path, r[0], r[1:]) for r in rows]

    def _batch(self, benchmark: str) -> str | None:
        """The benchmark's assignment in force: its latest batch of rows."""
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
        from masklens.core.review.reading import ASSIGNMENT_COLUMNS, assignment_row

        with self._lock, self._guard("reading"):
            rows = self._db.execute(
                f"SELECT id, {', '.join(ASSIGNMENT_COLUMNS)} FROM assignments WHERE batch = ?"
                " AND reviewer = ? ORDER BY position", (batch, reviewer or self.reviewer)).fetchall()
        checked = [assignment_row(self.path, r[0], r[1:]) for r in rows]
        return [QueueItem(r[4], bool(r[5])) for r in checked]

    def progress(self, benchmark: str, reviewer: str | None = None) -> tuple[int, int]:
        """(done, total) of the reviewer's queue: done = queued samples with a current verdict
        or an effective correction by that reviewer."""
        who = reviewer or self.reviewer
        queue = self.queue(benchmark, who)
        seen = self.reviewed_samples(benchmark, reviewer=who)
        seen |= {c.sample_id for c in self.corrections(benchmark, reviewer=who)}
        return sum(1 for s in queue if s in seen), len(queue)

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


def _latest(rows: Iterable[Verdict]) -> list[Verdict]:
    """The latest of ``rows`` per (benchmark, sample, prompt, reviewer), retractions applied,
    cleared ones left out."""
    latest: dict[tuple[str, str, str, str], Verdict] = {}
    for v in effective(rows):
        latest[v.key] = v
    return [v for v in latest.values() if v.verdict]


def _default_reviewer() -> str:
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in some containers
        return "reviewer"
