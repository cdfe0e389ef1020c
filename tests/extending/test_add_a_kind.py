"""docs/extending.md, proven: a kind added in one folder (tests/extending/squares/) plus one card
(squares_card.py), installed through the registry, is found by `masklens score --help`, scored by
the CLI and the Python API alike, given its report section by convention, and offered by the
window's File › Open benchmark… with its own card."""

from __future__ import annotations

import importlib
import json
import sys

import pytest

import masklens.core as ml
from masklens.core.cli import main
from masklens.core.reports import layout as report_layout
from masklens.core.scoring import contract


@pytest.fixture
def squares(monkeypatch, tmp_path):
    """The Squares kind registered by module path, as a plug-in would; the registries are restored after."""
    monkeypatch.setattr(contract, "_KIND_MODULES", dict(contract._KIND_MODULES))
    monkeypatch.setattr(contract, "_KINDS", dict(contract._KINDS))
    monkeypatch.setattr(report_layout, "_LAYOUTS", dict(report_layout._LAYOUTS))
    contract.register_kind("squares", "squares.kind")
    from squares.kind import write_example

    return write_example(tmp_path / "squares")


def test_the_registered_kind_is_listed_by_score_help(squares, capsys):
    with pytest.raises(SystemExit) as done:
        main(["score", "--help"])
    assert done.value.code == 0
    assert "squares" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["score", "squares", "--help"])
    out = capsys.readouterr().out
    assert "--ann" in out and "--score-threshold" in out


def test_the_cli_and_the_python_api_score_it_alike(squares, tmp_path):
    assert "squares" in ml.kind_names()
    out = tmp_path / "scores.json"
    assert main(["score", "squares", "--ann", str(squares["ann"]), "--pred", str(squares["pred"]),
                 "--out", str(out)]) == 0
    cli = json.loads(out.read_text())
    api = ml.score("squares", ann=squares["ann"], pred=squares["pred"])
    # a: IoU 1; b: the half square (s 0.5 ≥ t, IoU 0.5), the whole one is below t; c: no overlap
    assert [r["IoU"] for r in api.samples] == [1.0, 0.5, 0.0]
    assert api.summary["all"] == {"N": 3, "mIoU": 0.5, "hit_rate": pytest.approx(2 / 3)}
    assert cli["summary"] == api.to_json()["summary"]
    lower = ml.score("squares", ann=squares["ann"], pred=squares["pred"], score_threshold=0.4)
    assert [r["IoU"] for r in lower.samples] == [1.0, 1.0, 0.0]


def test_its_report_section_is_found_by_convention(squares):
    layout = report_layout.get_layout("squares")
    assert type(layout).__module__ == "squares.report"
    assert layout.headline == ("mIoU", "hit_rate")


def test_the_window_offers_it_and_shows_its_card(squares, qtbot, monkeypatch):
    from masklens.gui import cards
    from masklens.gui.dialogs.open_dialog import OpenDialog

    cards.registered_kinds()  # the built-in cards are loaded into the real registry first
    monkeypatch.setattr(cards, "_CARDS", dict(cards._CARDS))
    sys.modules.pop("squares_card", None)
    importlib.import_module("squares_card")  # a card module registers itself on import
    assert cards.card_for("squares").__name__ == "SquaresCard"

    dialog = OpenDialog()
    qtbot.addWidget(dialog)
    names = [dialog.kinds.itemData(i) for i in range(dialog.kinds.count())]
    assert "squares" in names
    dialog.kinds.setCurrentIndex(names.index("squares"))
    assert dialog.kind().title == "Squares"
    assert {f.action.dest for f in dialog.fields} >= {"ann", "pred"}

    from masklens.gui.window.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    try:
        assert window.open_benchmark("squares", ["--ann", str(squares["ann"]), "--pred", str(squares["pred"])])
        qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=10000)
        qtbot.waitUntil(lambda: window.findChild(cards.card_for("squares")) is not None, timeout=10000)
    finally:
        window.jobs.cancel_all()
        window.rescoring.runner.cancel_all()
        qtbot.waitUntil(lambda: not window.jobs.busy and not window.rescoring.runner.busy, timeout=10000)
