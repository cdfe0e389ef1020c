"""CSV that a spreadsheet opens as data: every field quoted, no live formula, one line per row.

Rules for every cell masklens writes (report ``summary.csv``/``samples.csv``, ``review export``):

- every field is quoted (``csv.QUOTE_ALL``), rows end in ``\\n``;
- line breaks inside a field (CR, LF and the other Unicode line separators) are written as
  the visible escapes ``\\r``, ``\\n``, ``\\u2028`` …, so even an importer that treats a bare
  CR as a row break (as naive spreadsheet imports do) sees one row per record. This is not
  reversible; the JSON exports keep the exact text;
- text whose first character, after skipping leading whitespace and control/format
  characters of any width, is a formula trigger (``= + - @`` in ASCII, full-width
  ``＝ ＋ － ＠``, small forms ``﹦ ﹢ ﹣ ﹫``, the minus sign ``−``), or that starts with a
  control character (tab, CR, LF …), gets a leading ``'`` so the spreadsheet shows it as text;
- numbers (Python ``int``/``float``, not ``bool``) are numbers, not formulas: ``-0.25`` in a
  metric column stays ``-0.25`` so it can be summed. Only values that are text are neutralised,
  so a *string* such as the sample id ``"-3"`` is written ``'-3``.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

#: characters that start a formula once the cell is NFKC-normalised (full-width forms fold to these)
FORMULA_TRIGGERS = frozenset("=+-@")
#: triggers that NFKC does not fold onto the ASCII ones
EXTRA_TRIGGERS = frozenset("\u2212\u2796\u2795")  # minus sign, heavy minus/plus signs
#: line breaks inside a field -> visible escapes
_LINE_BREAKS = {
    "\r": "\\r", "\n": "\\n", "\x0b": "\\x0b", "\x0c": "\\x0c", "\x1c": "\\x1c",
    "\x1d": "\\x1d", "\x1e": "\\x1e", "\x85": "\\x85", "\u2028": "\\u2028", "\u2029": "\\u2029",
}
_ESCAPE = str.maketrans(_LINE_BREAKS)


def _skippable(ch: str) -> bool:
    """Whitespace or control/format characters a spreadsheet may skip before a formula."""
    return ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp")


def starts_formula(text: str) -> bool:
    """Whether a spreadsheet could read ``text`` as a formula (see the module's rules)."""
    if not text:
        return False
    if unicodedata.category(text[0]) == "Cc":
        return True
    for ch in text:
        if _skippable(ch):
            continue
        folded = unicodedata.normalize("NFKC", ch)[:1]
        return folded in FORMULA_TRIGGERS or ch in EXTRA_TRIGGERS
    return False


def is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def safe_cell(value: object) -> object:
    """One cell: numbers unchanged, text with line breaks escaped and formulas neutralised."""
    if value is None or is_number(value) or isinstance(value, bool):
        return value
    text = value if isinstance(value, str) else str(value)
    if starts_formula(text):
        text = "'" + text
    return text.translate(_ESCAPE)


def csv_text(rows: Iterable[Mapping[str, Any]], columns: list[str]) -> str:
    """Header plus one quoted line per row (missing and None cells empty, extra keys ignored)."""
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow([safe_cell(c) for c in columns])
    for r in rows:
        w.writerow(["" if r.get(k) is None else safe_cell(r.get(k)) for k in columns])
    return buf.getvalue()
