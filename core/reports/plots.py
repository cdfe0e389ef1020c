"""Plots for reports, rendered with matplotlib's canvases (no pyplot state): PNG bytes for the
HTML, and SVG and PDF of the same figure for a paper."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence

from masklens.core.reports.layout import Figure

#: Okabe–Ito, colour-blind safe
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")


def _new(width: float = 6.4, height: float = 3.4):  # -> (Figure, Axes)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="y", alpha=0.3)
    return fig, ax


def warm_up() -> None:
    """Import matplotlib and render one empty figure (the font cache: seconds on a cold start),
    so that a caller can report it as a step of its own."""
    fig, _ax = _new(1.0, 1.0)
    _png(fig)


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _figure(title: str, fig, caption: str) -> Figure:  # noqa: ANN001 - a matplotlib Figure
    """The report's Figure of ``fig``: PNG, then SVG and PDF of the same layout (no metadata
    dates, so the same data give the same bytes)."""
    import matplotlib
    from matplotlib.backends.backend_pdf import FigureCanvasPdf  # named here: a bundler sees them
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    png = _png(fig)
    vector = {}
    for fmt, canvas, no_date in (("svg", FigureCanvasSVG, {"Date": None}),
                                 ("pdf", FigureCanvasPdf, {"CreationDate": None})):
        buf = io.BytesIO()
        with matplotlib.rc_context({"svg.hashsalt": "masklens"}):  # the SVG's ids: not random
            canvas(fig).print_figure(buf, format=fmt, metadata=no_date)
        vector[fmt] = buf.getvalue()
    return Figure(title, png, caption, svg=vector["svg"], pdf=vector["pdf"])


def _clean(values: Sequence[float | None]) -> list[float]:
    return [float("nan") if v is None or not math.isfinite(float(v)) else float(v) for v in values]


def grouped_bars(
    title: str,
    categories: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    ylabel: str = "",
    caption: str = "",
) -> Figure:
    """One bar per (category, series), series side by side."""
    fig, ax = _new()
    n = max(len(series), 1)
    width = 0.8 / n
    for i, (name, values) in enumerate(series.items()):
        xs = [c + (i - (n - 1) / 2) * width for c in range(len(categories))]
        vals = _clean(values)
        bars = ax.bar(xs, vals, width, label=name, color=PALETTE[i % len(PALETTE)])
        ax.bar_label(bars, labels=["" if math.isnan(v) else f"{v:.2f}" for v in vals],
                     fontsize=7, padding=1)
    ax.set_xticks(range(len(categories)), list(categories))
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if len(series) > 1:
        ax.legend(fontsize=8, frameon=False)
    return _figure(title, fig, caption)


def lines(
    title: str,
    x: Sequence[float] | Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    xlabel: str = "",
    ylabel: str = "",
    caption: str = "",
    marker_at: float | None = None,
    styles: Sequence[tuple[int, int]] | None = None,
) -> Figure:
    """Line plot of several series over a shared x axis (thresholds, levels).

    ``styles`` gives each series (colour index, line-style index), e.g. colour = metric and
    line style = model; the legend then goes beside the plot."""
    fig = line_figure(title, x, series, xlabel=xlabel, ylabel=ylabel, marker_at=marker_at,
                      styles=styles)
    return _figure(title, fig, caption)


#: line styles told apart at screen size: a dash pattern with gaps wide enough to see at 1.5 pt,
#: and a marker of its own, per style index (solid + circle, long dash + square, dots + triangle,
#: dash-dot + diamond)
LINE_STYLES: tuple[tuple[object, str], ...] = (
    ("-", "o"), ((0, (6, 3)), "s"), ((0, (1, 2.5)), "^"), ((0, (7, 2.5, 1.5, 2.5)), "D"),
)


def line_figure(
    title: str,
    x: Sequence[float] | Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    xlabel: str = "",
    ylabel: str = "",
    marker_at: float | None = None,
    styles: Sequence[tuple[int, int]] | None = None,
):  # -> matplotlib Figure
    """The matplotlib figure :func:`lines` renders."""
    fig, ax = _new(7.4 if styles else 6.4, 3.4)
    for i, (name, values) in enumerate(series.items()):
        c, d = styles[i] if styles else (i % len(PALETTE), (i // len(PALETTE)) % len(LINE_STYLES))
        dash, marker = LINE_STYLES[d % len(LINE_STYLES)]
        ax.plot(list(x), _clean(values), marker=marker, ms=4, lw=1.5, label=name,
                color=PALETTE[c % len(PALETTE)], linestyle=dash)
    if marker_at is not None:
        ax.axvline(marker_at, color="#888", lw=0.8, ls=":")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if styles:
        ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0),
                  handlelength=3.5)  # long enough to show the dash pattern
    else:
        ax.legend(fontsize=7, frameon=False, ncol=2, handlelength=3.5)
    return fig


def stacked_bars(
    title: str,
    categories: Sequence[str],
    parts: Mapping[str, Sequence[float | None]],
    *,
    ylabel: str = "",
    caption: str = "",
    colors: Sequence[str] | None = None,
) -> Figure:
    """Stacked shares per category (e.g. zero / partial / full IoGT per level), legend outside."""
    fig, ax = _new(7.2, 3.4)
    bottom = [0.0] * len(categories)
    for i, (name, values) in enumerate(parts.items()):
        vals = [0.0 if math.isnan(v) else v for v in _clean(values)]
        bars = ax.bar(range(len(categories)), vals, 0.6, bottom=bottom, label=name,
                      color=(colors or PALETTE)[i % len(colors or PALETTE)])
        ax.bar_label(bars, labels=[f"{v:.2f}" if v >= 0.06 else "" for v in vals],
                     label_type="center", fontsize=7, color="white")
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.set_xticks(range(len(categories)), list(categories))
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _figure(title, fig, caption)
