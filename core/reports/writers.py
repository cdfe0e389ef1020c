"""CSV/JSON files of a report: summary.csv, samples.csv, summary.json."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from masklens.core.files.io import atomic_write_json, atomic_write_text, json_safe
from masklens.core.files.safe_csv import csv_text
from masklens.core.reports.runs import ReportContext
from masklens.core.review.verdicts import Verdict


def flatten(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts become dotted columns; lists are JSON-encoded."""
    out: dict[str, Any] = {}
    for k, v in record.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, key + "."))
        elif isinstance(v, (list, tuple)):
            out[key] = json.dumps(json_safe(list(v)))
        else:
            out[key] = json_safe(v)
    return out


def _csv(rows: Iterable[Mapping[str, Any]], columns: list[str]) -> str:
    return csv_text(rows, columns)  # quoted, formula-safe, one line per row (core/files/safe_csv.py)


def write_summary_csv(path: Path, ctx: ReportContext) -> None:
    rows = [
        {"model": run.name, "group": g, "metric": m, "value": json_safe(v)}
        for run in ctx.runs
        for g, metrics in run.result.summary.items()
        for m, v in metrics.items()
    ]
    atomic_write_text(path, _csv(rows, ["model", "group", "metric", "value"]))


def write_samples_csv(path: Path, ctx: ReportContext) -> None:
    """One row per (model, sample): its id and group (the column named as the kind names it:
    ``group``, CAFE ``edit_type``, which its record also holds), its readout record, flattened,
    plus the reviewers' verdicts."""
    by_sample: dict[str, list[Verdict]] = {}
    for v in ctx.verdicts:
        by_sample.setdefault(v.sample_id, []).append(v)
    rows: list[dict[str, Any]] = []
    group = ctx.kind.group_name
    columns: list[str] = ["model", "sample_id", group]
    for run in ctx.runs:
        for sample, rec in zip(ctx.benchmark.samples, run.result.samples, strict=True):
            row = {"model": run.name, "sample_id": sample.id, group: sample.group}
            for k, v in flatten(rec).items():
                row.setdefault(k, v)
                if k not in columns:
                    columns.append(k)
            vs = by_sample.get(sample.id, [])
            row["verdicts"] = "; ".join(
                f"{v.reviewer}:{v.verdict}" + (f"@{v.prompt_id}" if v.prompt_id else "") for v in vs
            )
            rows.append(row)
    columns.append("verdicts")
    atomic_write_text(path, _csv(rows, columns))


def write_summary_json(path: Path, data: Mapping[str, Any]) -> None:
    atomic_write_json(path, data)
