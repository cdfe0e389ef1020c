"""The hostile matrix (tests/hardening/hostile_matrix.py) in the suite: every command of the CLI's
command table has its place in it, a trimmed run (every third cell) ends with every user byte
intact and every answer a correct write/read or a one-line error, and docs/reliability.md states
the full matrix's size as the matrix generates it. `make fuzz` runs every cell."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from . import hostile_matrix as hm

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def _template():
    yield
    hm.cleanup()


def test_every_command_is_in_the_matrix_or_classified():
    """A new command fails here until it is a writer, a store reader or explicitly neither."""
    leaves = hm.leaf_commands()
    placed = set(hm.WRITERS) | set(hm.STORE_READERS) | set(hm.NEITHER)
    assert [c for c in leaves if c not in placed] == []
    assert sorted(placed - set(leaves)) == []  # nothing classified that the CLI no longer has
    assert not set(hm.NEITHER) & (set(hm.WRITERS) | set(hm.STORE_READERS))
    assert set(hm.WRITERS) >= hm.FILE_WRITERS | hm.STORE_WRITERS


def test_the_trimmed_matrix_keeps_every_user_byte_and_answers_in_one_line():
    results = hm.run_matrix(trim=3)
    failed = [r.line() for r in results if r.failed]
    assert failed == []
    counts = hm.counts(results)
    assert counts.get("bytes changed", 0) == 0 and counts.get("traceback", 0) == 0
    assert counts.get("valid write", 0) and counts.get("valid read", 0) and counts.get("clean error", 0)


def test_the_reliability_page_states_the_matrix_as_generated():
    text = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    writers, targets = len(hm.WRITERS), len(hm.TARGETS)
    cells = len(hm.write_cells())
    readers, stores = len(hm.STORE_READERS), len(hm.STORES)
    stated = re.search(r"(\d+) commands that write × (\d+) targets\b.*?= (\d+) runs", text, re.S)
    assert stated and tuple(map(int, stated.groups())) == (writers, targets, cells), stated
    stated = re.search(r"(\d+) commands that read a review store × (\d+) stores = (\d+) runs", text)
    assert stated and tuple(map(int, stated.groups())) == (readers, stores, readers * stores), stated
