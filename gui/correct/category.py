"""Change category… in Correct mode: the benchmark's categories and the combo that picks one.

A kind has categories when its loader keeps each instance's COCO ``category_id`` in the ground
truth's ``meta["category_ids"]`` (today SA-Co/Gold, ``pcs``).
The choices are every id the ground truths carry plus the ``categories`` list of the files they
were read from (``meta["file"]``), named as the file names them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_FILES: dict[tuple[str, float], dict[Any, str]] = {}


def category_ids(gt: Any) -> list[Any]:
    """A ground truth's per-instance category ids ([] when its kind carries none)."""
    cats = list(gt.meta.get("category_ids") or [])
    return cats if any(c is not None for c in cats) else []


def no_category_reason(session: Any, sample: Any, kind: Any,
                       choices: list[tuple[Any, str]] | None = None) -> str:
    """Why Change category is unavailable for the edit ``session`` ("" when it is available);
    ``choices``: the benchmark's categories (:func:`benchmark_categories`) — with one only, there
    is no other to change to."""
    if session is None or session.instance is None:
        return "select a loaded ground-truth instance first"
    gt = sample.gts.get(session.gt_key) if sample is not None else None
    if gt is not None and category_ids(gt):
        if choices is not None and len(choices) < 2:
            named = f" ({choices[0][1]})" if choices else ""
            return (f"the benchmark's files name one category{named}: there is no other to change it to "
                    "(add it to their `categories` list)")
        return ""
    name = kind.name if kind is not None else "this kind"
    if name == "ovs":
        return "in OVS the class is the ground truth: delete the instance and add it to the other class's ground truth"
    return f"{name}'s ground truth carries no categories"


def file_categories(path: str | Path) -> dict[Any, str]:
    """id -> name of a COCO file's ``categories`` ({} when it has none or cannot be read)."""
    p = Path(path)
    try:
        key = (str(p), p.stat().st_mtime)
    except OSError:
        return {}
    if key not in _FILES:
        try:
            cats = json.loads(p.read_text(encoding="utf-8")).get("categories")
        except (OSError, ValueError, AttributeError):
            cats = None
        _FILES[key] = {c["id"]: str(c.get("name", "")) for c in cats or []
                       if isinstance(c, dict) and "id" in c}
    return _FILES[key]


def benchmark_categories(bench: Any) -> list[tuple[Any, str]]:
    """(id, label) of every category of ``bench``'s ground truths, sorted by id."""
    names: dict[Any, str] = {}
    files: set[str] = set()
    for sample in bench.samples if bench is not None else []:
        for gt in sample.gts.values():
            ids = category_ids(gt)
            if not ids:
                continue
            names.update({c: names.get(c, "") for c in ids if c is not None})
            if gt.meta.get("file"):
                files.add(str(gt.meta["file"]))
    for f in sorted(files):
        for cid, name in file_categories(f).items():
            names[cid] = names.get(cid) or name
    return [(cid, f"{cid} {name}".strip()) for cid, name in sorted(names.items(), key=lambda kv: str(kv[0]))]


class CategoryChoices:
    """The categories of the benchmark open, found once per benchmark object (a pass over every
    ground truth and a read of their files is too slow to repeat on every edit): another
    benchmark, or the same one with its ground truth replaced (the corrected view installs a
    new benchmark object), is looked at again."""

    def __init__(self) -> None:
        self._benchmark: Any = None
        self._choices: list[tuple[Any, str]] = []

    def of(self, bench: Any) -> list[tuple[Any, str]]:
        """:func:`benchmark_categories` of ``bench``, remembered until another benchmark is asked about."""
        if bench is None:
            return []
        if bench is not self._benchmark:
            self._benchmark, self._choices = bench, benchmark_categories(bench)
        return self._choices

    def forget(self) -> None:
        """Drop the benchmark remembered (it was closed or replaced)."""
        self._benchmark, self._choices = None, []

    def label(self, bench: Any, cid: Any) -> str:
        """``cid`` with its name where the files give one ("2 circle")."""
        return next((label for c, label in self.of(bench) if c == cid), str(cid))


def ask_category(parent: Any, current: Any, choices: list[tuple[Any, str]]) -> Any:
    """A combo of the benchmark's categories; the id chosen, None when cancelled."""
    from PySide6.QtWidgets import QInputDialog

    labels = [label for _, label in choices]
    at = next((i for i, (cid, _) in enumerate(choices) if cid == current), 0)
    label, ok = QInputDialog.getItem(parent, "Change category", f"category (now {current}):", labels, at, False)
    return next((cid for cid, lab in choices if lab == label), None) if ok else None
