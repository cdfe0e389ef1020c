"""How a report lays out one benchmark kind: tables like the paper's, figures, failures.

Each kind has one small module ``report`` in its package (``masklens.core.kinds.<name>.report``)
exposing ``LAYOUT`` (a :class:`KindLayout`); the registry below finds it by convention and imports
it lazily. A kind without one gets the generic layout (metrics × groups per model).

Tables follow the papers: one row per model, columns grouped by subset
(e.g. CAFE's SM | CC | OC | Overall, each with cgF1, IL_MCC, pmF1), so several
models sit side by side in the same table. Cells hold raw values (plain
fractions, as ``masklens score`` writes them); formatting happens in the HTML.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from masklens.core import plugins
from masklens.core.plugins import Plugins

if TYPE_CHECKING:
    from masklens.core.reports.runs import ModelRun, ReportContext
    from masklens.core.schema import Sample


@dataclass
class Table:
    """A table: optional spanning header row, header, rows (first cell is the row label)."""

    title: str
    header: list[str]
    rows: list[list[Any]]
    header_groups: list[tuple[str, int]] = field(default_factory=list)
    caption: str = ""
    id: str = ""
    #: (row index, column index) -> (group, metric) of the summary value behind a cell
    sources: dict[tuple[int, int], tuple[str, str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "header_groups": [list(g) for g in self.header_groups],
            "header": self.header,
            "rows": self.rows,
            "caption": self.caption,
            "sources": [[r, c, g, m] for (r, c), (g, m) in sorted(self.sources.items())],
        }


@dataclass
class Figure:
    """A rendered plot with a title and caption: PNG bytes (shown in the HTML), and the same
    plot as SVG and PDF (vector, for a paper; written beside it in the report's figures/)."""

    title: str
    png: bytes
    caption: str = ""
    svg: bytes = b""
    pdf: bytes = b""


@dataclass(frozen=True)
class Failure:
    """One failing sample of a model: its failure kind, how bad (higher = worse), which prompts."""

    kind: str
    severity: float
    prompt_ids: tuple[str, ...] = ()
    detail: str = ""


def _col_width(table: Table, c: int) -> int:
    """Rough rendered width of a column in characters (header vs. 4-decimal numbers)."""
    cells = [len(str(table.header[c]))] + [
        6 if isinstance(r[c], float) else len(str(r[c])) for r in table.rows
    ]
    return max(cells) + 2


def split_wide(table: Table, max_chars: int = 132) -> list[Table]:
    """Split a table with spanning column groups into several that fit a page width
    (about ``max_chars`` characters; each part keeps the row labels); other tables come
    back unchanged."""
    widths = [_col_width(table, c) for c in range(len(table.header))]
    if sum(widths) <= max_chars or not table.header_groups:
        return [table]
    chunks: list[list[tuple[str, int, int]]] = [[]]  # (label, span, first column)
    col, width = 1, widths[0]
    for label, span in table.header_groups[1:]:
        w = sum(widths[col:col + span])
        if chunks[-1] and width + w > max_chars:
            chunks.append([])
            width = widths[0]
        chunks[-1].append((label, span, col))
        col += span
        width += w
    out = []
    for k, chunk in enumerate(chunks):
        cols = [0] + [c for _, span, first in chunk for c in range(first, first + span)]
        out.append(Table(
            f"{table.title} ({k + 1}/{len(chunks)})" if len(chunks) > 1 else table.title,
            [table.header[c] for c in cols],
            [[row[c] for c in cols] for row in table.rows],
            [table.header_groups[0], *[(label, span) for label, span, _ in chunk]],
            table.caption if k == len(chunks) - 1 else "",
            f"{table.id}-{k + 1}",
        ))
    return out


def value_of(summary: dict[str, dict[str, Any]], group: str, metric: str) -> Any:
    return summary.get(group, {}).get(metric)


def paper_table(
    title: str,
    runs: Sequence[ModelRun],
    columns: Sequence[tuple[str, Sequence[str]]],
    *,
    labels: dict[str, str] | None = None,
    caption: str = "",
    id: str = "",
) -> Table:
    """Models as rows; ``columns`` = [(group, [metric, …]), …] as spanning column groups.
    Groups absent from every run are left out; missing metrics show as empty cells."""
    labels = labels or {}
    present = [
        (g, ms) for g, ms in columns if any(g in r.result.summary for r in runs)
    ]
    header = ["Model"] + [labels.get(m, m) for _, ms in present for m in ms]
    groups = [(g, len(ms)) for g, ms in present] if len(present) > 1 else []
    if groups:
        groups = [("", 1), *groups]
    rows: list[list[Any]] = []
    sources: dict[tuple[int, int], tuple[str, str]] = {}
    for i, run in enumerate(runs):
        row: list[Any] = [run.name]
        for g, ms in present:
            for m in ms:
                sources[(i, len(row))] = (g, m)
                row.append(value_of(run.result.summary, g, m))
        rows.append(row)
    return Table(title, header, rows, groups, caption, id or _slug(title), sources)


def metric_groups_table(
    title: str,
    runs: Sequence[ModelRun],
    metrics: Sequence[str],
    groups: Sequence[str],
    *,
    labels: dict[str, str] | None = None,
    caption: str = "",
    id: str = "",
) -> Table:
    """Models as rows; one spanning column group per metric with the groups under it
    (HalluSegBench's S / M / L table)."""
    labels = labels or {}
    gs = [g for g in groups if any(g in r.result.summary for r in runs)]
    header = ["Model"] + [g for _ in metrics for g in gs]
    rows, sources = [], {}
    for i, run in enumerate(runs):
        row: list[Any] = [run.name]
        for m in metrics:
            for g in gs:
                sources[(i, len(row))] = (g, m)
                row.append(value_of(run.result.summary, g, m))
        rows.append(row)
    spans = [("", 1)] + [(labels.get(m, m), len(gs)) for m in metrics]
    return Table(title, header, rows, spans, caption, id or _slug(title), sources)


def group_columns_table(
    title: str,
    runs: Sequence[ModelRun],
    groups: Sequence[str],
    metrics: Sequence[str],
    *,
    labels: dict[str, str] | None = None,
    caption: str = "",
    id: str = "",
) -> Table:
    """Metrics as rows (prefixed with the model when there are several), groups as columns —
    for tables too wide to put every (group, metric) pair in one row."""
    labels = labels or {}
    gs = [g for g in groups if any(g in r.result.summary for r in runs)]
    rows: list[list[Any]] = []
    sources: dict[tuple[int, int], tuple[str, str]] = {}
    for run in runs:
        for m in metrics:
            label = labels.get(m, m)
            i = len(rows)
            rows.append([label if len(runs) == 1 else f"{run.name} · {label}",
                         *[value_of(run.result.summary, g, m) for g in gs]])
            sources.update({(i, j + 1): (g, m) for j, g in enumerate(gs)})
    return Table(title, ["metric", *gs], rows, [], caption, id or _slug(title), sources)


def metric_rows_table(title: str, run: ModelRun, groups: Sequence[str], *, id: str = "") -> Table:
    """Metrics as rows, groups as columns (the generic layout, one table per model)."""
    summary = run.result.summary
    gs = [g for g in groups if g in summary] + [g for g in summary if g not in groups]
    metrics: list[str] = []
    for g in gs:
        metrics += [m for m in summary[g] if m not in metrics]
    sources = {}
    rows = []
    for i, m in enumerate(metrics):
        rows.append([m, *[summary[g].get(m) for g in gs]])
        sources.update({(i, j + 1): (g, m) for j, g in enumerate(gs)})
    return Table(title, ["metric", *gs], rows, [], "", id or _slug(title), sources)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


class KindLayout:
    """The generic layout; kind modules subclass it and override what their paper does."""

    #: group whose metrics are the headline (None: the kind's first group)
    headline_group: str | None = None
    #: headline metrics: comparison table, threshold sweep, model differences
    headline: tuple[str, ...] = ()
    #: parameters swept in the threshold sweep (those the kind has)
    sweep_params: tuple[str, ...] = ("score_threshold", "iou_threshold")
    #: the grid each swept parameter takes
    sweep_values: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)

    def group_of(self, ctx: ReportContext) -> str:
        return self.headline_group or (ctx.kind.groups[0] if ctx.kind.groups else "all")

    def headline_metrics(self, ctx: ReportContext) -> list[str]:
        if self.headline:
            return list(self.headline)
        g = self.group_of(ctx)
        first = ctx.runs[0].result.summary.get(g, {}) if ctx.runs else {}
        return [m for m, v in first.items() if isinstance(v, float)][:4]

    def tables(self, ctx: ReportContext) -> list[Table]:
        """Paper-style tables (all models side by side)."""
        return [
            metric_rows_table(f"{ctx.kind.title or ctx.kind.name} — {run.name}", run, ctx.kind.groups)
            for run in ctx.runs
        ]

    def figures(self, ctx: ReportContext) -> list[Figure]:
        """Plots particular to the kind (the sweep and galleries are added by the report)."""
        from masklens.core.reports.plots import grouped_bars

        g_metrics = self.headline_metrics(ctx)
        groups = [g for g in ctx.kind.groups if any(g in r.result.summary for r in ctx.runs)]
        if not g_metrics or not groups:
            return []
        return [
            grouped_bars(
                f"{m} per group",
                groups,
                {r.name: [_num(r.result.summary.get(g, {}).get(m)) for g in groups] for r in ctx.runs},
                ylabel=m,
            )
            for m in g_metrics[:2]
        ]

    def prepare(self, ctx: ReportContext, run: ModelRun) -> None:
        """Called before :meth:`failures`/:meth:`sample_ok` are asked about ``run``'s samples
        (e.g. to note a run-level value such as OVS's τ*)."""

    def failures(self, sample: Sample, readout: dict[str, Any]) -> list[Failure]:
        """Failure kinds of one sample (generic: none — kinds know what failing means)."""
        return []

    def sample_ok(self, sample: Sample, readout: dict[str, Any]) -> bool | None:
        """Whether a sample passes (for fixes/breaks between models); None when not decidable."""
        fails = self.failures(sample, readout)
        return not fails

    def gallery_threshold(self, ctx: ReportContext, run: ModelRun) -> float | None:
        """Instances drawn in the gallery have a score ≥ this (None: all)."""
        return ctx.params.get("score_threshold")

    def gallery_prompts(self, sample: Sample, failure: Failure) -> list[str]:
        """Prompts to draw for a failure (default: those it names, else every prompt)."""
        return list(failure.prompt_ids) or [p.id for p in sample.prompts]


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) else float("nan")


def _layout(name: str, obj: object) -> KindLayout:
    if not isinstance(obj, KindLayout):
        raise TypeError(f"report layout '{name}' is a {type(obj).__name__}, not a KindLayout")
    return obj


#: each kind's report section: entry points of ``masklens.report_layouts`` (the kind's name ->
#: a KindLayout), masklens' own included; a kind without one gets the generic layout
LAYOUTS: Plugins[KindLayout] = Plugins(plugins.REPORT_LAYOUTS, "report layout", _layout)


def register_layout(kind: str, layout: KindLayout | str) -> None:
    """Add a kind's layout in this process (an object, or ``"module:attribute"``); an installed
    package declares an entry point in ``masklens.report_layouts`` instead."""
    LAYOUTS.add(kind, layout)


def get_layout(kind: str) -> KindLayout:
    """The layout registered for ``kind``; the generic one when there is none."""
    if kind not in LAYOUTS:
        return _GENERIC
    return LAYOUTS.get(kind)


_GENERIC = KindLayout()
