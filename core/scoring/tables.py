"""Plain-text tables for the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from masklens.core.scoring.contract import BenchmarkKind, ScoreResult


def _fmt(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def format_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [header] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for j, row in enumerate(cells):
        lines.append("  ".join(c.rjust(widths[i]) if i else c.ljust(widths[i]) for i, c in enumerate(row)))
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_summary(result: ScoreResult, kind: BenchmarkKind) -> str:
    """Metrics as rows, groups as columns, in the kind's group order."""
    groups = [g for g in kind.groups if g in result.summary] + [
        g for g in result.summary if g not in kind.groups
    ]
    metrics: list[str] = []
    for g in groups:
        for m in result.summary[g]:
            if m not in metrics:
                metrics.append(m)
    rows = [[m, *[result.summary[g].get(m) for g in groups]] for m in metrics]
    params = ", ".join(f"{k}={v:g}" for k, v in result.params.items())
    out = f"{kind.title or kind.name}  ({params})\n" + format_table(["metric", *groups], rows)
    if result.notes:
        out += "\n" + "\n".join(f"note: {n}" for n in result.notes)
    return out
