"""How a :class:`~masklens.core.scoring.contract.ScoreResult` shows itself: a one-line ``repr``
(benchmark, parameters, groups, sample count, the first group's headline numbers) and an HTML
table of the summary for notebooks (``_repr_html_``)."""

from __future__ import annotations

import html
from typing import Any

#: how many of the first group's metrics the one-line repr shows
HEADLINE = 3


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "–" if value is None else str(value)


def short_repr(result: Any) -> str:
    """``ScoreResult('cafe_demo', params={…}, groups=[…], samples=18, Overall: N=18 …)``."""
    groups = list(result.summary)
    head = ""
    if groups:
        first = result.summary[groups[0]]
        shown = ", ".join(f"{k}={_number(v)}" for k, v in list(first.items())[:HEADLINE])
        head = f", {groups[0]}: {shown}{', …' if len(first) > HEADLINE else ''}"
    return (f"ScoreResult({result.benchmark!r}, params={result.params!r}, groups={groups!r}, "
            f"samples={len(result.samples)}{head})")


def html_table(result: Any) -> str:
    """The summary as an HTML table: one row per metric, one column per group."""
    groups = list(result.summary)
    metrics = list(dict.fromkeys(k for g in groups for k in result.summary[g]))
    esc = html.escape
    params = ", ".join(f"{esc(str(k))}={esc(_number(v))}" for k, v in result.params.items())
    head = "".join(f"<th>{esc(str(g))}</th>" for g in groups)
    rows = "".join(
        f"<tr><th style=\"text-align:left\">{esc(str(m))}</th>"
        + "".join(f"<td>{esc(_number(result.summary[g].get(m)))}</td>" for g in groups) + "</tr>"
        for m in metrics)
    notes = "".join(f"<li>{esc(n)}</li>" for n in result.notes)
    return (f"<div><b>{esc(str(result.benchmark))}</b> ({params}; {len(result.samples)} samples)"
            f"<table><thead><tr><th>metric</th>{head}</tr></thead><tbody>{rows}</tbody></table>"
            + (f"<ul>{notes}</ul>" if notes else "") + "</div>")
