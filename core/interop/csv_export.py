"""Per-sample CSV: one row per (prediction set, sample) with its id and group (the column named
as the kind names it: ``group``, CAFE ``edit_type``), the kind's readout record
(flattened as the report's samples.csv), the TP/FP/FN instance counts at (t, τ) and the
reviewers' verdicts; with several annotators (SA-Co/Gold) also the counts against each further
annotator's ground truth (``gt1.tp``, ``gt1.fp``, ``gt1.fn``, …).

Cells go through the project's one safe CSV writer (:func:`masklens.core.files.safe_csv.csv_text`:
every field quoted, line breaks escaped, spreadsheet formulas neutralised).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from masklens.core.files.io import atomic_write_text
from masklens.core.files.safe_csv import csv_text
from masklens.core.interop.table import ExportTable, sample_counts
from masklens.core.reports.writers import flatten


def sample_rows(table: ExportTable) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows and their columns (fixed ones first, then the readout's in first-seen order).
    The sample's group is the column the kind names (``group``; CAFE: ``edit_type``, which its
    readout also holds: one column)."""
    group = table.kind.group_name
    columns = ["model", "sample_id", group, "tp", "fp", "fn", "verdicts"]
    columns += [f"{key}.{c}" for key in table.annotators[1:] for c in ("tp", "fp", "fn")]
    rows = []
    for run in table.runs:
        for sample, record in zip(table.benchmark.samples, run.result.samples, strict=True):
            row: dict[str, Any] = {"model": run.label, "sample_id": sample.id,
                                   group: sample.group, **sample_counts(table, run, sample),
                                   "verdicts": table.verdicts_of(sample.id)}
            for key in table.annotators[1:]:
                row.update({f"{key}.{c}": n for c, n in sample_counts(table, run, sample, key).items()})
            for k, v in flatten(record).items():
                if k == group and v == sample.group:  # the readout's copy of the group
                    continue
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
