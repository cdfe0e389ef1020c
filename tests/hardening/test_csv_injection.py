"""CSV formula injection: report samples.csv/summary.csv and `review export` hold no live formula,
read by Python's csv module and by a naive spreadsheet-like import that breaks rows at CR/LF."""

from __future__ import annotations

import csv
import io
import json
import unicodedata

import pytest
from reports.toykind import install, load_toy_predictions, write_fixture

from masklens.core.files.io import atomic_write_json
from masklens.core.files.safe_csv import csv_text, safe_cell, starts_formula
from masklens.core.reports import build_report
from masklens.core.review.locations import benchmark_key
from masklens.core.review.store import Role, open_store

PAYLOADS = [
    "=1+1",
    "＝HYPERLINK(\"http://x\")",  # full-width equals
    "﹦1+1",  # small form equals
    "＋1", "－1", "＠SUM(A1)", "−2+3", "+1", "-2+3", "@SUM(A1)",
    "\t=1+1", "\r=1+1", "\n=1+1", " \u3000=1", "\u200b=1", "\x00=1",
    "a\r=cmd|'/C calc'!A0",  # a CR in the middle: a naive import starts a new row here
    "b\n@SUM(1)", "c\r\n+1", "d\u2028=1", "e\x0b=1", "f\x85-1", "g,\r=1,h",
]
TRIGGERS = set("=+-@")


def _formula_like(cell: str) -> bool:
    """What a spreadsheet would evaluate: after whitespace/control characters, a trigger in any width.
    A cell that is a plain number (e.g. -0.25) is a number, not a formula."""
    try:
        float(cell)
        return False
    except ValueError:
        pass
    for ch in cell:
        if ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp"):
            continue
        return unicodedata.normalize("NFKC", ch)[:1] in TRIGGERS or ch in "\u2212"
    return False


def _naive_spreadsheet_cells(text: str) -> list[str]:
    """Rows broken at every CR, LF and Unicode line break (str.splitlines), quotes honoured
    within a line only — how a naive spreadsheet import reads a CSV."""
    cells = []
    for line in text.splitlines():
        for row in csv.reader([line]):
            cells += row
    return cells


def _assert_no_formula(path, expected_rows: int) -> None:
    text = path.read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) == expected_rows
    assert len(text.splitlines()) == expected_rows  # one physical line per row
    for line in text.splitlines():  # every field is quoted
        assert line.startswith('"') and line.endswith('"')
    bad = [c for r in rows for c in r if _formula_like(c)]
    assert not bad, f"{path.name}: formula cells {bad!r}"
    bad = [c for c in _naive_spreadsheet_cells(text) if _formula_like(c)]
    assert not bad, f"{path.name} (naive import): formula cells {bad!r}"


@pytest.mark.parametrize("payload", PAYLOADS)
def test_every_payload_is_neutralised(payload):
    mid_field = payload[0] in "abcdefg"  # the formula follows a line break inside the field
    assert starts_formula(payload) is not mid_field
    cell = safe_cell(payload)
    assert isinstance(cell, str)
    assert not _formula_like(cell)
    assert len(cell.splitlines()) == 1  # line breaks are escaped: one spreadsheet row


def test_numbers_stay_numbers_and_text_keeps_its_content():
    text = csv_text([{"a": -0.25, "b": -3, "c": "-3", "d": True, "e": None, "f": "plain"}],
                    ["a", "b", "c", "d", "e", "f"])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[1] == ["-0.25", "-3", "'-3", "True", "", "plain"]
    assert float(rows[1][0]) == -0.25
    assert safe_cell("x\ry\nz") == "x\\ry\\nz"


def test_review_export_csv_has_no_formula(tmp_path):
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="=evil") as st:
        for i, p in enumerate(PAYLOADS):
            st.record(p, f"{p}#{i}", "model_wrong", note=p, prompt_id=p, reviewer=p or "x")
        st.export(tmp_path / "v.csv", history=True)
        st.export(tmp_path / "v.json", history=True)
    _assert_no_formula(tmp_path / "v.csv", len(PAYLOADS) + 1)
    notes = [v["note"] for v in json.loads((tmp_path / "v.json").read_text())["verdicts"]]
    assert notes == PAYLOADS  # the JSON export keeps the exact text


@pytest.fixture
def toy_kind(monkeypatch):
    """The toy kind and layout, registered for this test only (no leak into later tests)."""
    from masklens.core.reports import layout
    from masklens.core.scoring import contract as scoring

    monkeypatch.setattr(scoring, "KINDS", scoring.KINDS.copy())
    monkeypatch.setattr(layout, "LAYOUTS", layout.LAYOUTS.copy())
    return install()


def test_report_csvs_have_no_formula(tmp_path, toy_kind):
    kind = toy_kind
    files = write_fixture(tmp_path)
    ann = json.loads(files["ann"].read_text())
    hostile = {"s1": PAYLOADS[0], "s2": "a\r=cmd|'/C calc'!A0", "s3": "＝1", "s4": "\n@SUM(1)"}
    for s in ann["samples"]:
        s["id"] = hostile[s["id"]]
    atomic_write_json(files["ann"], ann)
    pred = json.loads(files["pred_a"].read_text())
    pred = {hostile[k.split("/")[0]] + "/" + k.split("/")[1]: v for k, v in pred.items()}
    atomic_write_json(files["pred_a"], pred)
    bench = kind.load_benchmark(ann=str(files["ann"]))
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="-1+1") as st:
        st.record(benchmark_key(bench), hostile["s2"], "fine", prompt_id="@x")
        verdicts = st.current()
    out = build_report(kind, bench, [load_toy_predictions(files["pred_a"])], tmp_path / "rep",
                       names=["=model"], verdicts=verdicts)
    _assert_no_formula(out / "samples.csv", 5)
    summary = json.loads((out / "summary.json").read_text())["models"]["=model"]["summary"]
    _assert_no_formula(out / "summary.csv", 1 + sum(len(m) for m in summary.values()))
    rows = list(csv.DictReader((out / "samples.csv").open(newline="")))
    assert rows[1]["sample_id"] == "a\\r=cmd|'/C calc'!A0"
    assert rows[0]["model"] == "'=model"

