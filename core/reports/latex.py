"""A report's tables as LaTeX for a paper: ``tables.tex`` in the report folder, one ``table``
float per table with booktabs rules (``\\usepackage{booktabs}``), the numbers as the HTML shows
them (4 decimals, counts as integers, an em dash for a missing value)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from masklens.core.reports.html import fmt
from masklens.core.reports.layout import Table

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
            # the metric symbols of the captions, which pdflatex's input encoding lacks
            "≥": r"$\geq$", "≤": r"$\leq$", "×": r"$\times$", "τ": r"$\tau$", "α": r"$\alpha$",
            "Δ": r"$\Delta$", "→": r"$\rightarrow$", "−": "-"}


def escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (and an em dash as ``---``)."""
    return "".join(_SPECIAL.get(c, c) for c in text).replace("—", "---")


def _numeric(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def table_tex(table: Table) -> str:
    """One ``table`` float: caption (title and caption), a spanning header row with
    ``\\cmidrule`` under each group, the header, ``\\midrule``, the rows."""
    n = len(table.header)
    align = "l" + "".join("r" if all(_numeric(r[c]) for r in table.rows if c < len(r)) else "l"
                          for c in range(1, n))
    lines = [r"\begin{table}[t]", r"\centering"]
    caption = escape(table.title) + (f". {escape(table.caption)}" if table.caption else "")
    lines += [rf"\caption{{{caption}}}", rf"\begin{{tabular}}{{{align}}}", r"\toprule"]
    if table.header_groups:
        cells, rules, col = [], [], 1
        for label, span in table.header_groups:
            cells.append(rf"\multicolumn{{{span}}}{{c}}{{{escape(label)}}}" if label and span > 1
                         else escape(label) if label else " & ".join([""] * span))
            if label:
                rules.append(rf"\cmidrule(lr){{{col}-{col + span - 1}}}")
            col += span
        lines += [" & ".join(cells) + r" \\", " ".join(rules)] if rules else []
    lines.append(" & ".join(escape(str(h)) for h in table.header) + r" \\")
    lines.append(r"\midrule")
    for row in table.rows:
        lines.append(" & ".join(escape(fmt(v)) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def tables_tex(title: str, tables: Sequence[Table]) -> str:
    """The document part holding every table (include it with ``\\input{tables.tex}``)."""
    head = (f"% {title}: the report's tables, written by masklens\n"
            "% needs \\usepackage{booktabs} in the preamble; include with \\input{tables.tex}\n\n")
    return head + "\n".join(table_tex(t) for t in tables)
