"""Each interaction does only what changed (issue 21, every interaction ≤ 50 ms): what nobody can
see is not computed on a slider step or a sample switch, and what is shown reads as before."""

from __future__ import annotations

from PySide6.QtCore import Qt
from test_cards_in_place import key_step


def _open(window, qtbot, kind: str) -> None:
    assert window.open_demo(kind, sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    qtbot.waitExposed(window)


def test_the_hidden_corrected_summary_is_summarised_only_when_shown(window, qtbot, monkeypatch,
                                                                     no_internal_errors):
    _open(window, qtbot, "pcs")
    view = window.corrected_view
    calls = []
    real = view.summaries
    monkeypatch.setattr(view, "summaries", lambda: calls.append(1) or real())
    for index in (1, 2, 3):
        window.state.set_index(index)
    key_step(window, qtbot, "score_threshold", Qt.Key.Key_PageUp)
    key_step(window, qtbot, "score_threshold", Qt.Key.Key_PageDown)
    assert not view.summary.isVisible() and calls == []  # the switch is off: the summary is hidden
    values = view.summary.values  # read (a test, a screen reader): summarised now, once
    assert len(calls) == 1 and values
    st = window.state
    rows = st.scorers[st.active].readouts(st.params)
    expect = st.kind.summarize(st.benchmark.samples, st.scorers[st.active].overlaps, rows,
                               st.kind.resolve_params(st.params))
    first = next(iter(expect.values()))
    assert {k: a for k, (a, _b) in values.items()} == {k: v for k, v in first.items() if k in values}
    assert view.summary.values is values and len(calls) == 1  # nothing new: not again
    button = window.view_toolbar.widgetForAction(view.action)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)  # the switch on: the summary is shown
    assert view.on and view.summary.isVisible()
    shown = len(calls)
    key_step(window, qtbot, "score_threshold", Qt.Key.Key_PageUp)
    assert len(calls) == shown + 1  # visible: it follows the slider at once
