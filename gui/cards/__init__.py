"""Readout cards: the benchmark's verdict on the current sample, with its reason, in the paper's words.

One module per benchmark kind registers its card class with :func:`register_card` (as the
sample views do in :mod:`masklens.gui.views`); every module of this package is imported on first
use, so a new benchmark adds a file and touches no switch. A kind without a card gets the
generic one (``register_card("")``).

A card reads the core scorer's per-sample record (``Scorer.readouts`` / ``benchmark_readout``)
and never recomputes a metric; ``numbers``/``texts`` keep what it shows (tests, accessibility).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from masklens.core.schema import Prediction, Sample
from masklens.core.scoring.contract import BenchmarkKind
from masklens.gui.cards.widgets import (
    Badge,
    Bar,
    HoverFrame,
    MetricGrid,
    Tone,
    fmt,
    row_of,
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


class ReadoutCard(QFrame):
    """One benchmark's verdict for one sample (or, with ``focus``, for one of its prompts).

    Subclasses implement :meth:`build` with the helpers below. ``hovered`` carries the
    prompt id and instance index that decided a verdict (index −1: the mouse left).
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
        self.badges: list[Badge] = []
        self.reasons: list[str] = []
        self.numbers: dict[str, Any] = {}
        self.texts: dict[str, str] = {}
        self.tooltips: dict[str, str] = {}
        self.hover_rows: list[tuple[HoverFrame, str, int]] = []
        self.lay = QVBoxLayout(self)
        self.lay.setContentsMargins(4, 4, 4, 4)
        self.lay.setSpacing(3)
        if title:
            head = wrapped(title, bold=True)
            self.lay.addWidget(head)
        self.build()

    # ------------------------------------------------------------ to implement
    def build(self) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------ helpers
    def tip(self, key: str, fallback: str = "") -> str:
        """The definition of ``key``: the card's per-sample one, then the kind's."""
        own, kinds = self.HELP.get(key, ""), self.ctx.help(key)
        parts = [p for p in (own, f"benchmark: {kinds}" if kinds and own else kinds) if p]
        return "\n".join(parts) or fallback

    def params_tip(self) -> str:
        specs = self.ctx.kind.params if self.ctx.kind else ()
        return "\n".join(f"{p.symbol or p.name} = {self.ctx.param(p.name, p.default):g}: {p.help}" for p in specs)

    def section(self, text: str, tooltip: str = "") -> QLabel:
        label = wrapped(text, tooltip, bold=True, muted=True)
        self.lay.addWidget(label)
        return label

    def verdict(self, key: str, text: str, tone: Tone, tooltip: str, reason: str = "",
                prompt: str | None = None, instance: int | None = None, lead: str = "") -> Badge:
        """A verdict badge (with ``lead`` before it and its reason after); hovering it highlights
        ``instance`` of ``prompt`` on the canvas when both are given."""
        frame = HoverFrame()
        lay = QVBoxLayout(frame)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.setSpacing(1)
        badge = Badge(text, tone, tooltip)
        if len(lead) > 28 or self.focus is not None and lead:  # long, or a narrow card: two lines
            lay.addWidget(wrapped(lead))
            lay.addWidget(row_of(badge))
        else:
            lay.addWidget(row_of(*([wrapped(lead)] if lead else []), badge))
        if reason:
            lay.addWidget(wrapped(reason, tooltip, monospace=True))
        if prompt is not None and instance is not None:
            self.hover_rows.append((frame, prompt, instance))
            frame.setFocusPolicy(Qt.FocusPolicy.TabFocus)  # the keyboard reaches the highlight too
            frame.entered.connect(lambda p=prompt, i=instance: self.hovered.emit(p, i))
            frame.left.connect(lambda p=prompt: self.hovered.emit(p, -1))
        self.lay.addWidget(frame)
        self.badges.append(badge)
        self.reasons.append(reason)
        self.texts[key] = text
        self.tooltips[key] = tooltip
        return badge

    def grid(self) -> MetricGrid:
        g = MetricGrid()
        box = QWidget()
        box.setLayout(g)
        self.lay.addWidget(box)
        return g

    def add_metric(self, grid: MetricGrid, key: str, symbol: str, value: Any, *, tone: Tone = Tone.NEUTRAL,
               digits: int = 3, bar: tuple[float, float] | None = (0.0, 1.0), tick: float | None = None,
               tooltip: str | None = None, suffix: str = "") -> QLabel:
        """One row ``symbol  value  [bar]``; ``value`` comes from the record as it is."""
        text = fmt(value, digits) + suffix
        tip = tooltip if tooltip is not None else self.tip(key, symbol)
        tip = f"{symbol} = {fmt(value, 6) if isinstance(value, float) else fmt(value)}\n{tip}"
        b = None
        if bar is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
            b = Bar(float(value), tone, bar[0], bar[1], tick)
        elif bar is not None:
            b = Bar(None, Tone.NONE)
        label = grid.add(symbol, text, tip, b, tone)
        self.numbers[key], self.texts[key], self.tooltips[key] = value, text, tip
        return label

    def note(self, text: str, tooltip: str = "") -> QLabel:
        """A muted line of context (its tooltip: ``tooltip``, else the parameters' meanings)."""
        label = wrapped(text, tooltip or self.params_tip(), muted=True)
        self.lay.addWidget(label)
        return label


_CARDS: dict[str, type[ReadoutCard]] = {}
_LOADED = False


def register_card(kind: str) -> Callable[[type[ReadoutCard]], type[ReadoutCard]]:
    """Class decorator: show this card for benchmark kind ``kind`` ("" = the generic fallback)."""

    def deco(cls: type[ReadoutCard]) -> type[ReadoutCard]:
        _CARDS[kind] = cls
        return cls

    return deco


def _load_modules() -> None:
    global _LOADED
    if not _LOADED:
        _LOADED = True
        for info in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{info.name}")


def card_for(kind: str | None) -> type[ReadoutCard]:
    """The card class registered for ``kind``, else the generic card."""
    _load_modules()
    return _CARDS.get(kind or "", _CARDS[""])


def registered_kinds() -> list[str]:
    _load_modules()
    return [k for k in _CARDS if k]


__all__ = ["Bar", "CardContext", "ReadoutCard", "Tone", "card_for", "register_card", "registered_kinds"]
