"""Reading a review store's rows as untrusted input.

- :func:`select_columns`: an older schema (no ``uid``, no ``retracts``) is read as it is.
- :func:`as_text`: a cell that should hold text but holds a BLOB (an edited store) is decoded
  when it is UTF-8, else a DataFormatError naming the file, the row and the field.
- :func:`content_uid` / :func:`missing_required`: what ``merge`` needs to stay idempotent and to
  count the rows it cannot copy.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from masklens.core.errors import DataFormatError

#: columns an older schema may lack -> the SQL value read in their place
_DEFAULTS = {"uid": "NULL", "retracts": "''", "prompt_id": "''", "note": "''"}
#: columns later schema versions added (an older store lacks them and is still sound)
ADDED_LATER = frozenset({"uid", "retracts"})
#: fields that may be empty (NULL) in a stored row
_OPTIONAL = {"uid"}


def select_columns(present: Iterable[str], fields: Sequence[str], *, path: Path | None = None) -> str:
    """The SELECT list reading ``fields`` from a verdicts table that has the columns ``present``."""
    have = set(present)
    missing = [f for f in fields if f not in have and f not in _DEFAULTS]
    if missing:
        raise DataFormatError(f"the 'verdicts' table lacks column(s) {', '.join(missing)}", path=path,
                              hint="run `masklens review check` on it")
    return ", ".join(f if f in have else f"{_DEFAULTS[f]} AS {f}" for f in fields)


def as_text(path: Path, row_id: Any, values: Sequence[Any], fields: Sequence[str]) -> list[Any]:
    """The row's values as text (a BLOB holding UTF-8 decoded; NULL kept for the caller to judge);
    anything else is a DataFormatError naming the file, the row and the field."""
    out: list[Any] = []
    for name, v in zip(fields, values, strict=True):
        if isinstance(v, bytes):
            try:
                v = v.decode("utf-8")
            except UnicodeDecodeError:
                raise DataFormatError("holds binary data where text is expected", path=path,
                                      record=f"row id {row_id}", field=name,
                                      hint="the store was edited outside masklens; "
                                      "`masklens review check` lists every such cell") from None
        elif v is not None and not isinstance(v, str):
            v = str(v)  # a number stored in a TEXT column of a hand-edited store
        out.append(v)
    return out


def missing_required(verdict: Any) -> list[str]:
    """The required fields (all but ``uid``) that are NULL in a row read back."""
    from dataclasses import fields

    return [f.name for f in fields(verdict) if f.name not in _OPTIONAL and getattr(verdict, f.name) is None]


def content_uid(verdict: Any) -> str:
    """A uid for a row that has none, derived from its content (the same row: the same uid)."""
    h = hashlib.blake2b(digest_size=16)
    for part in (verdict.benchmark, verdict.sample_id, verdict.prompt_id, verdict.verdict,
                 verdict.note, verdict.reviewer, verdict.time, verdict.retracts):
        h.update(str(part).encode("utf-8", "surrogatepass") + b"\x00")
    return "c" + h.hexdigest()


def blob_cells(db: sqlite3.Connection, columns: Iterable[str], limit: int = 20) -> list[str]:
    """Cells of the verdicts table holding a BLOB (or NULL where text is required), for
    ``review check``: "row id N: field 'x' holds …"."""
    problems: list[str] = []
    for col in columns:
        null_bad = col not in _OPTIONAL
        cond = f"typeof({col}) = 'blob'" + (f" OR {col} IS NULL" if null_bad else "")
        for rid, kind in db.execute(f"SELECT id, typeof({col}) FROM verdicts WHERE {cond} LIMIT ?", (limit,)):
            problems.append(f"row id {rid}: field '{col}' holds {'binary data' if kind == 'blob' else 'NULL'}"
                            " where text is expected")
    return problems[:limit]


#: the assignments table's columns as read, and what each must hold
ASSIGNMENT_COLUMNS = ("batch", "benchmark", "reviewer", "position", "sample_id", "shared", "seed", "time")
_ASSIGNMENT_INTEGERS = {"position": False, "shared": False, "seed": True}  # column -> NULL allowed


def assignment_row(path: Path, row_id: Any, row: Sequence[Any]) -> tuple[Any, ...]:
    """One assignments row (ASSIGNMENT_COLUMNS order) checked as untrusted input: text where
    text belongs (a UTF-8 BLOB decoded), integers where integers belong; anything else is a
    DataFormatError naming the file, the table and row, and the column."""
    out: list[Any] = []
    for name, v in zip(ASSIGNMENT_COLUMNS, row, strict=True):
        if name in _ASSIGNMENT_INTEGERS:
            if not (type(v) is int or (v is None and _ASSIGNMENT_INTEGERS[name])):
                raise DataFormatError(f"holds {type(v).__name__} {v!r:.40} where an integer is expected",
                                      path=path, record=f"assignments row id {row_id}", field=name,
                                      hint="`masklens review check` lists every such cell")
            out.append(v)
            continue
        text = as_text(path, f"{row_id} of the assignments table", [v], [name])[0]
        if text is None:
            raise DataFormatError("holds NULL where text is expected", path=path,
                                  record=f"assignments row id {row_id}", field=name)
        out.append(text)
    return tuple(out)
