"""The readout card of each compared prediction set (the Compare sets tab's right-hand column):
the benchmark's own card (gui/cards) for the current sample under A, B, C, …"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QScrollArea, QVBoxLayout, QWidget

from masklens.gui.cards import CardContext, ReadoutCard, card_for
from masklens.gui.cards.widgets import wrapped

#: one compared set: (letter, name, its record for the sample or None, prediction of a prompt id,
#: its benchmark-level summary or None)
SetEntry = tuple[str, str, dict[str, Any] | None, Callable[[str], Any], Callable[[], Any]]


class SetCards(QScrollArea):
    """A column of cards, one per compared set, rebuilt only when a record changes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setMinimumWidth(220)
        self.cards: dict[str, ReadoutCard] = {}  # letter -> card
        self._key: Any = None
        self._box = QWidget()
        self._rows = QVBoxLayout(self._box)
        self._rows.setContentsMargins(2, 2, 2, 2)
        self._rows.addStretch(1)
        self.setWidget(self._box)

    def show_sets(self, kind: Any, sample: Any, params: dict[str, float], entries: list[SetEntry]) -> None:
        key = (id(kind), id(sample), tuple(sorted(params.items())),
               tuple((letter, name, id(rec)) for letter, name, rec, _, _ in entries))
        if key == self._key:
            return
        self._key = key
        while self._rows.count() > 1:
            item = self._rows.takeAt(0)
            old = item.widget() if item is not None else None
            if old is not None:  # every row but the last (a stretch) is a widget
                old.hide()
                old.deleteLater()
        self.cards = {}
        widgets: list[QWidget] = []
        for letter, name, rec, prediction, summary in entries:
            if rec is None:
                widgets.append(wrapped(f"{letter} · {name}: no record for this sample", muted=True))
                continue
            ctx = CardContext(kind, sample, dict(params), summary, prediction)
            card = card_for(kind.name if kind else None)(rec, ctx, title=f"{letter} · {name}")
            self.cards[letter] = card
            widgets.append(card)
        for i, w in enumerate(widgets):
            self._rows.insertWidget(i, w)
