"""Per-sample CSV: one row per (prediction set, sample) with the kind's readout record
(flattened as the report's samples.csv), the TP/FP/FN instance counts at (t, τ) and the
reviewers' verdicts.

Cells are written with ``csv.QUOTE_ALL`` and spreadsheet formulas neutralised
(:func:`masklens.core.review.csv_cell`). NOTE for the merge: main has ``core/safe_csv.py``
(``csv_text(rows, columns)``, the same signature as :func:`csv_text` here); use it instead.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from masklens.core.interop.table import ExportTable, sample_counts
from masklens.core.io import atomic_write_text
from masklens.core.reports.writers import flatten
from masklens.core.review import csv_cell


def csv_text(rows: Iterable[Mapping[str, Any]], columns: list[str]) -> str:
    """Header plus one fully quoted line per row (missing and None cells empty)."""
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow([csv_cell(c) for c in columns])
    for r in rows:
        w.writerow(["" if r.get(k) is None else csv_cell(r.get(k)) for k in columns])
    return buf.getvalue()


def sample_rows(table: ExportTable) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows and their columns (fixed ones first, then the readout's in first-seen order)."""
    columns = ["model", "sample_id", "group", "tp", "fp", "fn", "verdicts"]
    rows = []
    for run in table.runs:
        for sample, record in zip(table.benchmark.samples, run.result.samples, strict=True):
            row: dict[str, Any] = {"model": run.label, "sample_id": sample.id,
                                   "group": sample.group, **sample_counts(table, run, sample),
                                   "verdicts": table.verdicts_of(sample.id)}
            for k, v in flatten(record).items():
                key = k if k not in row else f"readout.{k}"
                row[key] = v
                if key not in columns:
                    columns.append(key)
            rows.append(row)
    return rows, columns


def write_csv(table: ExportTable, out: Path) -> list[Path]:
    """``out/samples.csv``."""
    rows, columns = sample_rows(table)
    path = out / "samples.csv"
    atomic_write_text(path, csv_text(rows, columns))
    return [path]
