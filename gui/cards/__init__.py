"""Readout cards: the benchmark's verdict on the current sample, with its reason, in the paper's words.

Each kind's card class is a plug-in (entry-point group ``masklens.gui.cards``, see
:mod:`masklens.core.plugins`), masklens' own cards included, imported when first shown; a kind
without a card gets the generic one (:class:`~masklens.gui.cards.generic.GenericCard`).

A card reads the core scorer's per-sample record (``Scorer.readouts`` / ``benchmark_readout``)
and never recomputes a metric; ``numbers``/``texts`` keep what it shows (tests, accessibility).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from masklens.core import plugins
from masklens.core.plugins import Plugins
from masklens.core.schema import Prediction, Sample
from masklens.core.scoring.contract import BenchmarkKind
from masklens.gui.cards.widgets import (
    Badge,
    Bar,
    HoverFrame,
    MetricGrid,
    MetricRow,
    Pill,
    Tone,
    chip,
    fmt,
    row_of,
    set_label,
    wrapped,
)


@dataclass
class CardContext:
    """What a card needs beside its record: the kind, the sample, the slider values and, lazily,
    the active prediction set's summary (benchmark-level values such as OVS's τ*)."""

    kind: BenchmarkKind | None
    sample: Sample
    params: Mapping[str, float] = field(default_factory=dict)
    summary: Callable[[], Mapping[str, Mapping[str, Any]] | None] = lambda: None
    #: the prediction a prompt id was scored with (None when unknown), for on-demand detail
    prediction: Callable[[str], Prediction | None] = lambda prompt_id: None

    def param(self, name: str, default: float = 0.0) -> float:
        return float(self.params.get(name, default))

    def help(self, key: str) -> str:
        return str((self.kind.metric_help if self.kind else {}).get(key, ""))


class Restructure(Exception):
    """Raised while a card updates in place when the new record needs other widgets."""


class ReadoutCard(QFrame):
    """One benchmark's verdict for one sample (or, with ``focus``, for one of its prompts).

    Subclasses implement :meth:`build` with the helpers below. ``hovered`` carries the
    prompt id and instance index that decided a verdict (index −1: the mouse left).

    Every widget a helper makes is a *slot* with a structural signature; :meth:`update_record`
    runs :meth:`build` again for a new record and, slot by slot, sets the new texts, tones and
    values on the existing widgets (a t step changes numbers, not widgets). A signature that
    differs (another verdict layout, a table of another size) means the card must be rebuilt.
    """

    hovered = Signal(str, int)
    #: per-sample definitions shown as tooltips (before the kind's benchmark-level metric_help)
    HELP: Mapping[str, str] = {}

    def __init__(self, record: Mapping[str, Any], ctx: CardContext, *, focus: str | None = None,
                 title: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("readoutCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.record, self.ctx, self.focus = record, ctx, focus
        self._slots: list[tuple[Any, Any]] = []
        self._replay: int | None = None  # the next slot to update while updating in place
        self._reset_outputs()
        self.lay = QVBoxLayout(self)
        self.lay.setContentsMargins(4, 4, 4, 4)
        self.lay.setSpacing(3)
        self._title = wrapped(title, bold=True) if title else None
        if self._title is not None:
            self.lay.addWidget(self._title)
        self.build()

    def _reset_outputs(self) -> None:
        self.badges: list[Badge] = []
        self.reasons: list[str] = []
        self.numbers: dict[str, Any] = {}
        self.texts: dict[str, str] = {}
        self.tooltips: dict[str, str] = {}
        self.hover_rows: list[tuple[HoverFrame, str, int]] = []

    # ------------------------------------------------------------ to implement
    def build(self) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------ in place
    def update_record(self, record: Mapping[str, Any], ctx: CardContext, title: str = "") -> bool:
        """Show ``record`` (same sample, new numbers) on the existing widgets; False when it needs
        other widgets (the caller then builds a new card: this one is left half-updated)."""
        if bool(title) != (self._title is not None):
            return False
        self.record, self.ctx = record, ctx
        self._reset_outputs()
        self._replay = 0
        try:
            self.build()
            if self._replay != len(self._slots):
                return False
        except Restructure:
            return False
        finally:
            self._replay = None
        if self._title is not None and self._title.text() != title:
            self._title.setText(title)
        return True

    def slot(self, signature: Any, make: Callable[[], Any], update: Callable[[Any], None] | None = None) -> Any:
        """The next widget (or tuple of widgets) of the card: ``make()`` while building (the caller
        lays it out), the existing one passed to ``update`` while updating in place; raises
        :class:`Restructure` when the signature differs from the one built."""
        if self._replay is None:
            made = make()
            self._slots.append((signature, made))
            return made
        i = self._replay
        if i >= len(self._slots) or self._slots[i][0] != signature:
            raise Restructure(signature)
        self._replay = i + 1
        made = self._slots[i][1]
        if update is not None:
            update(made)
        return made

    @property
    def building(self) -> bool:
        """True while the widgets are being made (False while updating in place)."""
        return self._replay is None

    # ------------------------------------------------------------ helpers
    def tip(self, key: str, fallback: str = "") -> str:
        """The definition of ``key``: the card's per-sample one, then the kind's."""
        own, kinds = self.HELP.get(key, ""), self.ctx.help(key)
        parts = [p for p in (own, f"benchmark: {kinds}" if kinds and own else kinds) if p]
        return "\n".join(parts) or fallback

    def params_tip(self) -> str:
        specs = self.ctx.kind.params if self.ctx.kind else ()
        return "\n".join(f"{p.symbol or p.name} = {self.ctx.param(p.name, p.default):g}: {p.help}" for p in specs)

    def line(self, text: str, tooltip: str = "", *, bold: bool = False, monospace: bool = False,
             muted: bool = False, colour: str | None = None) -> QLabel:
        """A word-wrapped line of the card (updated in place: its text and tooltip)."""
        def make() -> QLabel:
            label = wrapped(text, tooltip, bold=bold, monospace=monospace, muted=muted, colour=colour)
            self.lay.addWidget(label)
            return label

        return self.slot(("line", bold, monospace, muted, colour), make,
                         lambda label: set_label(label, text, tooltip))

    def section(self, text: str, tooltip: str = "") -> QLabel:
        return self.line(text, tooltip, bold=True, muted=True)

    def verdict(self, key: str, text: str, tone: Tone, tooltip: str, reason: str = "",
                prompt: str | None = None, instance: int | None = None, lead: str = "") -> Badge:
        """A verdict badge (with ``lead`` before it and its reason after); hovering it highlights
        ``instance`` of ``prompt`` on the canvas when both are given."""
        two_lines = len(lead) > 28 or self.focus is not None and bool(lead)  # long, or a narrow card
        target = (prompt, instance) if prompt is not None and instance is not None else None
        signature = ("verdict", bool(lead), two_lines, bool(reason))

        def make() -> tuple[HoverFrame, Badge, QLabel | None, QLabel | None]:
            frame = HoverFrame()
            lay = QVBoxLayout(frame)
            lay.setContentsMargins(2, 2, 2, 2)
            lay.setSpacing(1)
            badge = Badge(text, tone, tooltip)
            lead_label = wrapped(lead) if lead else None
            if two_lines and lead_label is not None:  # two lines: there is a lead
                lay.addWidget(lead_label)
                lay.addWidget(row_of(badge))
            else:
                lay.addWidget(row_of(*([lead_label] if lead_label is not None else []), badge))
            reason_label = wrapped(reason, tooltip, monospace=True) if reason else None
            if reason_label is not None:
                lay.addWidget(reason_label)

            def entered() -> None:
                if frame.target is not None:
                    self.hovered.emit(*frame.target)

            def left() -> None:
                if frame.target is not None:
                    self.hovered.emit(frame.target[0], -1)

            frame.entered.connect(entered)
            frame.left.connect(left)
            self.lay.addWidget(frame)
            return frame, badge, lead_label, reason_label

        def update(parts: tuple[HoverFrame, Badge, QLabel | None, QLabel | None]) -> None:
            _frame, badge, lead_label, reason_label = parts
            badge.show_verdict(text, tone, tooltip)
            if lead_label is not None:
                set_label(lead_label, lead, "")
            if reason_label is not None:
                set_label(reason_label, reason, tooltip)

        frame, badge, _lead, _reason = self.slot(signature, make, update)
        frame.target = target
        # the keyboard reaches the highlight too
        frame.setFocusPolicy(Qt.FocusPolicy.TabFocus if target is not None else Qt.FocusPolicy.NoFocus)
        if target is not None:
            self.hover_rows.append((frame, *target))
        self.badges.append(badge)
        self.reasons.append(reason)
        self.texts[key] = text
        self.tooltips[key] = tooltip
        return badge

    def grid(self) -> MetricGrid:
        def make() -> MetricGrid:
            g = MetricGrid()
            box = QWidget()
            box.setLayout(g)
            self.lay.addWidget(box)
            return g

        return self.slot(("grid",), make)

    def add_metric(self, grid: MetricGrid, key: str, symbol: str, value: Any, *, tone: Tone = Tone.NEUTRAL,
               digits: int = 3, bar: tuple[float, float] | None = (0.0, 1.0), tick: float | None = None,
               tooltip: str | None = None, suffix: str = "") -> QLabel:
        """One row ``symbol  value  [bar]``; ``value`` comes from the record as it is."""
        text = fmt(value, digits) + suffix
        tip = tooltip if tooltip is not None else self.tip(key, symbol)
        tip = f"{symbol} = {fmt(value, 6) if isinstance(value, float) else fmt(value)}\n{tip}"
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        lo, hi = bar if bar is not None and number else (0.0, 1.0)
        bar_value, bar_tone = (float(value), tone) if number else (None, Tone.NONE)

        def make() -> MetricRow:
            b = Bar(bar_value, bar_tone, lo, hi, tick if number else None) if bar is not None else None
            return grid.add(symbol, text, tip, b, tone)

        def update(row: MetricRow) -> None:
            row.show(symbol, text, tip, tone)
            if row.bar is not None:
                row.bar.show_value(bar_value, bar_tone, lo, hi, tick if number else None)

        row = self.slot(("metric", bar is not None), make, update)
        self.numbers[key], self.texts[key], self.tooltips[key] = value, text, tip
        return row.value

    def chips(self, chips: list[tuple[str, Tone, str]]) -> list[Pill]:
        """Flags side by side, each an outlined pill (updated in place)."""
        def make() -> list[Pill]:
            pills = [chip(text, tone, tip) for text, tone, tip in chips]
            self.lay.addWidget(row_of(*pills))
            return pills

        def update(pills: list[Pill]) -> None:
            for pill, (text, tone, tip) in zip(pills, chips, strict=True):
                pill.show_verdict(text, tone, tip)

        return self.slot(("chips", len(chips)), make, update)

    def table(self, signature: Any, make: Callable[[], Any]) -> Any:
        """A table the card fills itself (made by ``make`` and laid out here; kept while the
        signature, e.g. its size, stays the same)."""
        def made() -> Any:
            widget = make()  # or (the widget laid out, its parts …)
            self.lay.addWidget(widget[0] if isinstance(widget, tuple) else widget)
            return widget

        return self.slot(("table", signature), made)

    def note(self, text: str, tooltip: str = "") -> QLabel:
        """A muted line of context (its tooltip: ``tooltip``, else the parameters' meanings)."""
        return self.line(text, tooltip or self.params_tip(), muted=True)


#: each kind's card: entry points of ``masklens.gui.cards`` (the kind's name -> a ReadoutCard
#: subclass), masklens' own included; a kind without one (or with a broken one) gets the generic card
CARDS: Plugins[type[ReadoutCard]] = Plugins(plugins.CARDS, "readout card", plugins.subclass_of(ReadoutCard))


def register_card(kind: str) -> Callable[[type[ReadoutCard]], type[ReadoutCard]]:
    """Class decorator: show this card for benchmark kind ``kind`` in this process (a notebook, a
    test); an installed package declares an entry point in ``masklens.gui.cards`` instead."""

    def deco(cls: type[ReadoutCard]) -> type[ReadoutCard]:
        CARDS.add(kind, cls)
        return cls

    return deco


def card_for(kind: str | None) -> type[ReadoutCard]:
    """The card class registered for ``kind``, else the generic card."""
    if kind and kind in CARDS:
        card = CARDS.available().get(kind)
        if card is not None:
            return card
    from masklens.gui.cards.generic import GenericCard

    return GenericCard


def registered_kinds() -> list[str]:
    return CARDS.names()


__all__ = ["Bar", "CardContext", "ReadoutCard", "Tone", "card_for", "register_card", "registered_kinds"]
