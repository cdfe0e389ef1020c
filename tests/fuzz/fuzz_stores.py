"""Fuzz mutations of what surrounds the inputs: a hostile review store given with ``--reviews``
(report runs: a BLOB in a TEXT cell, a newer schema, a store without uids, 0 bytes, another
program's SQLite file), an existing ``--out`` folder that masklens did not write (report runs),
and a Ctrl+C at a random moment (every run). Each must end in a clean error (or "interrupted")
or a valid run, with the previous output intact."""

from __future__ import annotations

import random
import sqlite3
import uuid

from fuzz_cases import Workspace

from masklens.core.files.output_dirs import MARKER

_COLUMNS = "benchmark, sample_id, prompt_id, verdict, note, reviewer, time, uid, retracts"


def _store(path, rows, *, version: int = 3) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE verdicts (id INTEGER PRIMARY KEY AUTOINCREMENT, benchmark TEXT NOT NULL,"
               " sample_id TEXT NOT NULL, prompt_id TEXT NOT NULL DEFAULT '', verdict TEXT NOT NULL,"
               " note TEXT NOT NULL DEFAULT '', reviewer TEXT NOT NULL, time TEXT NOT NULL, uid TEXT,"
               " retracts TEXT NOT NULL DEFAULT '')")
    db.executemany(f"INSERT INTO verdicts ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    db.execute(f"PRAGMA user_version = {version}")
    db.commit()
    db.close()


def review_store(rng: random.Random, ws: Workspace) -> str:
    """A hostile review store added with --reviews (its bytes must not change)."""
    path = ws.base / "reviews.sqlite"
    bench = f"{ws.kind}:x"
    row = [bench, "s1", "", "model_wrong", "", "ann", "2026-01-01T00:00:00.000Z", uuid.uuid4().hex, ""]
    variant = rng.choice(["blob", "newer", "no_uid", "empty", "foreign", "text_blob"])
    if variant == "blob":
        _store(path, [row[:5] + [b"\xff\xfe"] + row[6:]])
        ws.expect_error = True
    elif variant == "text_blob":  # UTF-8 in a BLOB: read as text, a valid run
        _store(path, [row[:4] + [b"a note"] + row[5:]])
    elif variant == "newer":
        _store(path, [row], version=99)
        ws.expect_error = True
    elif variant == "no_uid":  # a valid run
        _store(path, [row[:7] + [None, ""]])
    elif variant == "empty":
        path.write_bytes(b"")
        ws.expect_error = True
    else:  # another program's SQLite file
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE other (x)")
        db.commit()
        db.close()
        ws.expect_error = True
    ws.argv += ["--reviews", str(path)]
    return f"--reviews: {variant}"


def out_not_ours(rng: random.Random, ws: Workspace) -> str:
    """The --out folder holds the user's own files (no marker): it must be refused, untouched."""
    (ws.out / MARKER).unlink(missing_ok=True)
    (ws.out / rng.choice(["notes.txt", "thesis.tex", "data.csv"])).write_text("the user's own\n")
    ws.expect_error = True
    return "--out: a folder masklens did not write"


def sigint(rng: random.Random, ws: Workspace) -> str:
    """Ctrl+C at a random moment of a valid run (loading, scoring, plotting, writing): the run
    ends as "masklens: interrupted" (exit 130) or finishes; the previous --out survives either
    way. (From 1 s on: earlier, Python itself may still be starting, before masklens runs.)"""
    ws.interrupt_after = round(rng.uniform(1.0, 4.0), 2)
    return f"SIGINT after {ws.interrupt_after} s"


STORE_MUTATIONS = {"review_store": review_store, "out_not_ours": out_not_ours}
SIGNAL_MUTATIONS = {"sigint": sigint}
