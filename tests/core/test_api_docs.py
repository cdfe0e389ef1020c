"""Every example of docs/api.md runs and prints what the page says: its ``pycon`` blocks are run in
order, in one namespace (as a notebook runs its cells), as doctests."""

from __future__ import annotations

import doctest
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "api.md"
BLOCK = re.compile(r"(?:<!-- needs: (?P<needs>[\w-]+) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```", re.S)


def blocks() -> list[tuple[int, str, str | None, str]]:
    """(line, language, needed module, text) of every fenced block of the page."""
    text = PAGE.read_text()
    return [(text.count("\n", 0, m.start()) + 1, m["lang"], m["needs"], m["body"])
            for m in BLOCK.finditer(text)]


def test_every_code_block_is_a_runnable_example():
    found = blocks()
    assert len(found) >= 6
    assert {lang for _, lang, _, _ in found} == {"pycon"}  # nothing on the page escapes the run


def test_the_walkthrough_runs_as_written(monkeypatch):
    monkeypatch.chdir(ROOT)
    globs: dict = {}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    ran = 0
    for line, _, needs, body in blocks():
        if needs and importlib.util.find_spec(needs) is None:
            # without it the example fails with the documented one-line advice instead
            from masklens.core.errors import MasklensError

            first = parser.get_examples(body)[0].source
            with pytest.raises(MasklensError, match=f"pip install {needs}"):
                exec(first, globs)  # noqa: S102 - the page's own example
            continue
        test = parser.get_doctest(body, globs, f"api.md:{line}", str(PAGE), line)
        result = runner.run(test, clear_globs=False)
        globs.update(test.globs)  # DocTest works on a copy: carry the names to the next block
        assert result.failed == 0, f"docs/api.md example at line {line} failed (see the output above)"
        ran += result.attempted
    assert ran >= 25
