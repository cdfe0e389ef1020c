"""Is a prediction file meant for this benchmark? Checked while it is read, before any scoring.

Two signs that a file belongs to another benchmark:

* its records carry the key field of another kind's results (CGEBench's ``level``, R2SM's
  ``query_id``) that this kind does not read — ids may still collide (image 1 exists in both),
  so matching ids alone would score it silently into nonsense;
* most of its records point to no image or prompt of the benchmark.

Kinds declare their own key fields (``BenchmarkKind.result_keys``); the COCO-results readers
call :func:`check_foreign_fields` and :func:`unmatched_message`. Qt-free, no heavy imports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from masklens.core.errors import DataFormatError

SAMPLE_RECORDS = 200  # records looked at (the first ones): enough to see what a file is


def result_key_owners() -> dict[str, str]:
    """Result-record key field -> title of the kind whose results carry it (``result_keys``)."""
    from masklens.core.scoring.contract import (
        available_kinds,  # lazy: the kinds import this module's users
    )

    return {f: k.title or k.name for k in available_kinds() for f in k.result_keys}


def check_foreign_fields(path: str | Path, records: Sequence[Any], own_fields: Iterable[str]) -> None:
    """Raise when most of the first records carry another kind's key field that ``own_fields``
    lacks (e.g. a CGEBench file, keyed by image_id *and* level, read as CAFE results)."""
    own = set(own_fields)
    head = [r for r in records[:SAMPLE_RECORDS] if isinstance(r, dict)]
    if not head:
        return
    for name, title in result_key_owners().items():
        if name in own:
            continue
        n = sum(1 for r in head if name in r)
        if 2 * n > len(head):
            raise DataFormatError(
                f"this looks like {title} predictions, not for this benchmark: {n} of its first {len(head)} records "
                f"carry '{name}', which results of the benchmark being scored do not have",
                path=path, field=name,
                hint="open a prediction file made for the benchmark that is open "
                     "(ids may coincide, so it would have been scored into nonsense)",
            )


def unmatched_message(records: Sequence[Any], points_somewhere: Callable[[dict[str, Any]], bool]) -> str:
    """"N of M records point to no image or prompt of the benchmark" (with a hint when most do)."""
    total = unmatched = 0
    for r in records:
        if not isinstance(r, dict):
            continue
        total += 1
        try:
            ok = points_somewhere(r)
        except (DataFormatError, TypeError, ValueError):
            ok = False
        unmatched += not ok
    text = f"{unmatched} of {total} records point to no image or prompt of the benchmark"
    if 2 * unmatched > total:
        text += " — most of them: is this file for another benchmark or another split?"
    return text
