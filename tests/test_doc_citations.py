"""The docs cite no ``design.md`` (it is not in the repository): every mention
of it must say that the design notes are kept outside the repository; files the docs link to
must exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _texts():
    for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        yield p, p.read_text(encoding="utf-8")
    for folder in ("core", "gui"):
        for p in sorted((ROOT / folder).rglob("*.py")):
            yield p, p.read_text(encoding="utf-8")


def test_no_citation_of_a_design_md_that_is_not_here():
    assert not (ROOT / "design.md").exists()
    bad = [f"{p.relative_to(ROOT)}: {line.strip()}" for p, text in _texts() for line in text.splitlines()
           if "design.md" in line]
    assert not bad, bad


def test_markdown_links_of_the_docs_point_at_files_that_exist():
    missing = []
    for p, text in _texts():
        if p.suffix != ".md":
            continue
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (p.parent / target).exists():
                missing.append(f"{p.relative_to(ROOT)} → {target}")
    assert not missing, missing
