"""A slider step or a sample switch updates the readout card in place: the same widgets
show the new record's numbers, and they read exactly as a card built afresh for that record;
another structure (a typed prompt) builds the card anew; another number of SA-Co/Gold instances
refills the same instance table."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTableWidget

from masklens.gui.cards import CardContext, card_for
from masklens.gui.cards.widgets import Bar

KINDS = ["cafe", "hallusegbench", "cgebench", "r2sm", "pcs", "ovs"]


def shown(card) -> dict:
    """Everything a card shows: label texts and tooltips, bars, tables, and its outputs."""
    labels = [(w.text(), w.toolTip(), w.palette().color(w.foregroundRole()).name())
              for w in card.findChildren(QLabel)]
    bars = [(b.value, b.tone, b.lo, b.hi, b.tick, b.toolTip()) for b in card.findChildren(Bar)]
    tables = []
    for t in card.findChildren(QTableWidget):
        heads = [(t.horizontalHeaderItem(c).text(), t.horizontalHeaderItem(c).toolTip())
                 for c in range(t.columnCount())]
        cells = [(t.item(r, c).text(), t.item(r, c).toolTip(), t.item(r, c).foreground().color().name(),
                  t.item(r, c).font().bold()) for r in range(t.rowCount()) for c in range(t.columnCount())]
        tables.append((heads, cells))
    hover = [(p, i) for _f, p, i in card.hover_rows]
    return {"labels": labels, "bars": bars, "tables": tables, "numbers": card.numbers, "texts": card.texts,
            "tooltips": card.tooltips, "reasons": card.reasons, "hover": hover,
            "badges": [(b.verdict, b.tone, b.text(), b.toolTip()) for b in card.badges]}


def fresh(window, deck):
    """The kind's card built now for the state's current record (as the deck would build it)."""
    st = window.state
    preds = st.predictions()
    ctx = CardContext(st.kind, st.sample, dict(st.params), deck._summary_for,
                      lambda pid: preds.get(pid) if preds is not None else None)
    return card_for(st.kind.name)(st.readout(), ctx, title=f"{st.kind.title or st.kind.name} · {st.active}")


def key_step(window, qtbot, name: str, key: Qt.Key) -> None:
    """One keyboard step of a parameter's slider, until the state has the new value."""
    slider = window.readout_panel.sliders.sliders[name]._slider
    before = window.state.params[name]
    slider.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.keyClick(slider, key)
    qtbot.waitUntil(lambda: window.state.params[name] != before, timeout=5000)
    qtbot.waitUntil(lambda: not window.rescoring.pending, timeout=20000)


@pytest.mark.parametrize("kind", KINDS)
def test_a_slider_step_updates_the_card_in_place_with_the_same_numbers(window, qtbot, kind,
                                                                        no_internal_errors):
    assert window.commands.open_demo(kind, sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: not window.jobs.busy, timeout=20000)  # e.g. HalluSegBench's edit leakage
    deck = window.readout_panel.deck
    names = [p.name for p in window.state.kind.params]
    changed = 0
    for index in range(min(6, len(window.state.benchmark.samples))):
        window.state.set_index(index)
        for name in names:
            # from the middle of the range outwards, then back and out again
            spec = next(p for p in window.state.kind.params if p.name == name)
            up = window.state.params[name] < (spec.minimum + spec.maximum) / 2
            there, back = (Qt.Key.Key_PageUp, Qt.Key.Key_PageDown)[::1 if up else -1]
            key_step(window, qtbot, name, there)
            card = deck.main_card
            for key in (back, there):
                before = shown(card)
                key_step(window, qtbot, name, key)
                assert deck.main_card is card, f"{kind}: the card was rebuilt for a {name} step"
                new = fresh(window, deck)
                assert shown(card) == shown(new)
                changed += shown(card)["labels"] != before["labels"]
                new.deleteLater()
    if kind != "r2sm":  # its demo's masks give the same IoUs at every t these steps reach
        assert changed, f"{kind}: no step changed what the card shows: the test proves nothing"


def test_another_number_of_instances_updates_the_card_in_place(window, qtbot):
    """SA-Co/Gold entries differ in their number of instances (none to many): a switch refills
    the same instance table (rows added, dropped, hidden when there are none) and reads as a
    card built afresh; a typed prompt (another structure) still builds the deck anew."""
    assert window.commands.open_demo("pcs", sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    deck = window.readout_panel.deck
    st = window.state
    counts = [len(st.readouts[st.active][i].get("instances", [])) for i in range(len(st.benchmark.samples))]
    a = next(i for i in range(len(counts)) if counts[i])
    b = next(i for i in range(len(counts)) if counts[i] != counts[a])
    empty = next((i for i in range(len(counts)) if not counts[i]), None)
    st.set_index(a)
    card = deck.main_card
    table = card.instance_table
    for index in (b, a, *([empty, a] if empty is not None else [])):
        st.set_index(index)
        assert deck.main_card is card and card.instance_table is table  # the same widgets …
        assert table.rowCount() == counts[index]
        assert table.parentWidget().isHidden() == (counts[index] == 0)  # no empty table shown
        new = fresh(window, deck)
        assert shown(card) == shown(new)  # … reading as a card built for this entry
        new.deleteLater()
    assert empty is not None, "the demo has no entry without instances: the test proves less"


def test_a_slider_step_keeps_the_details_tree_items_and_shows_the_new_values(window, qtbot):
    from masklens.gui.window.readout_panel import _rows

    assert window.commands.open_demo("cafe", sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    panel = window.readout_panel
    qtbot.mouseClick(panel.details, Qt.MouseButton.LeftButton)  # Details expanded, as a user does
    rows = window.state.readouts[window.state.active]
    # a pair whose p⁻ class changes while t climbs from 0.5 by three steps
    window.state.set_index(next(i for i, r in enumerate(rows) if 0.52 < r["neg_max_score"] < 0.75))
    top = panel.tree.topLevelItem(0)
    values = [[top.child(i).text(1) for i in range(top.childCount())]]
    for key in (Qt.Key.Key_PageUp, Qt.Key.Key_PageUp, Qt.Key.Key_PageUp):
        key_step(window, qtbot, "score_threshold", key)
        assert panel.tree.topLevelItem(0) is top  # the same items …
        title = f"{window.state.kind.title} · {window.state.active}"
        want = _rows([(title, window.state.readout())], panel.help, {})
        items = [top]
        while len(items) < len(want):  # depth first, as the rows are
            it = items[-1]
            nxt = it.child(0) if it.childCount() else None
            while nxt is None:
                parent = it.parent() or panel.tree.invisibleRootItem()
                i = parent.indexOfChild(it)
                nxt = parent.child(i + 1) if i + 1 < parent.childCount() else None
                it = parent
            items.append(nxt)
        assert [(i.text(0), i.text(1)) for i in items] == [(k, v) for _p, k, v, _t in want]  # … new values
        assert panel.value_of(title, "pos_class") == window.state.readout()["pos_class"]
        values.append([top.child(i).text(1) for i in range(top.childCount())])
    assert len({tuple(v) for v in values}) > 1, "the steps changed no value: the test proves nothing"


@pytest.mark.parametrize("kind", KINDS)
def test_a_sample_switch_reuses_the_card_and_shows_the_new_samples_numbers(window, qtbot, kind,
                                                                           no_internal_errors):
    assert window.commands.open_demo(kind, sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    qtbot.waitUntil(lambda: not window.jobs.busy, timeout=20000)
    deck, table = window.readout_panel.deck, window.browser.table
    rect = table.visualRect(table.model().index(0, 1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    reused = 0
    for _ in range(min(12, len(window.state.benchmark.samples) - 1)):
        card, index = deck.main_card, window.state.index
        qtbot.keyClick(table, Qt.Key.Key_Down)
        assert window.state.index != index
        new = fresh(window, deck)
        assert shown(deck.main_card) == shown(new)  # reused or not, it reads as a fresh card
        reused += deck.main_card is card
        new.deleteLater()
    if kind in ("cafe", "pcs", "r2sm"):  # cards of one shape across most samples
        assert reused, f"{kind}: no switch reused the card"


def test_a_collapsed_details_tree_is_filled_only_when_shown(window, qtbot, monkeypatch):
    """With "Details" collapsed (the default) a sample switch or a slider step leaves the tree
    alone; expanding it (a click, as a user does) shows the current sample's values."""
    assert window.commands.open_demo("cafe", sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    panel = window.readout_panel
    assert not panel.details.isChecked()
    filled: list[int] = []  # the tree filled with waiting sections (the real method, spied)
    fill = type(panel)._fill_tree

    def spied(self):
        if self._pending is not None:
            filled.append(1)
        fill(self)

    monkeypatch.setattr(type(panel), "_fill_tree", spied)
    fills = 0
    for index in (1, 2, 3):
        window.state.set_index(index)
    key_step(window, qtbot, "score_threshold", Qt.Key.Key_PageUp)
    assert len(filled) == fills  # nothing built while nobody can see it
    qtbot.mouseClick(panel.details, Qt.MouseButton.LeftButton)
    assert len(filled) == fills + 1 and panel._tree.isVisible()
    title = f"{window.state.kind.title} · {window.state.active}"
    assert panel.value_of(title, "id") == window.state.readout()["id"]
    assert panel.value_of(title, "pos_class") == window.state.readout()["pos_class"]
    window.state.set_index(4)  # expanded: it follows at once
    assert len(filled) == fills + 2
    assert panel._tree.topLevelItem(0).child(0).text(1) == str(window.state.readout()["id"])
