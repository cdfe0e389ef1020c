"""The stack of readout cards in the Readout dock: the benchmark's card for the current sample,
then one row per typed prompt with the original prompt's card beside the typed prompt's card
(both the kind's card, focused on the replaced prompt, from the same core scorer)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any, NamedTuple

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget
from superqt.utils import create_worker

from masklens.gui.browser.sample_table import same_record
from masklens.gui.cards import CardContext, ReadoutCard, card_for
from masklens.gui.cards.generic import GenericReadoutCard
from masklens.gui.cards.highlight import clear_highlight, show_highlight
from masklens.gui.cards.widgets import wrapped

log = logging.getLogger(__name__)

#: benchmarks up to this many samples get their summary (OVS τ*) on the GUI thread (≈ 1 ms per 15)
SYNC_SUMMARY_LIMIT = 2000


class CardDeck(QScrollArea):
    """Scrollable cards of the bound state's current sample (rebuilt by :meth:`refresh`)."""

    def __init__(self, parent: QWidget | None = None, original_for: Callable[[int], Any] | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.state: Any = None
        self.views: Callable[[], list[Any]] = list
        self.main_card: ReadoutCard | None = None
        #: per typed result shown: (result, original prompt's card or None, typed prompt's card)
        self.typed: list[tuple[Any, ReadoutCard | None, ReadoutCard]] = []
        self._summary_key: Any = None
        self._summary: Any = None
        self._pending: Any = None  # key of the summary being computed on the worker pool
        self._key: Any = None
        self._rec: Any = None  # the record the main card shows
        self._asked_summary = False  # whether a card shown read the set's summary
        self._shape: Any = None  # the cards' classes and roles last built
        #: index -> (original record, original sample) of a corrected sample, or None (the
        #: window passes the corrected-ground-truth switch's, gui/review/corrected_view.py)
        self.original_for: Callable[[int], Any] = original_for or (lambda index: None)
        self.original_card: ReadoutCard | None = None
        self._before: Any = None  # the shown sample's (original record, original sample), if corrected
        self._box = QWidget()
        self._rows = QVBoxLayout(self._box)
        self._rows.setContentsMargins(2, 2, 2, 2)
        self._rows.setSpacing(4)
        self._rows.addStretch(1)
        self.setWidget(self._box)

    def bind(self, state: Any, views: Callable[[], list[Any]]) -> None:
        """Follow ``state`` (an AppState): the cards rebuild when its sample, records or typed
        prompts change, whoever else listens (a refresh with unchanged records is free)."""
        self.state, self.views = state, views
        for signal in (state.benchmarkChanged, state.sampleChanged, state.readoutsChanged,
                       state.predictionsChanged, state.liveChanged):
            signal.connect(self.refresh)

    @property
    def cards(self) -> list[ReadoutCard]:
        out = [self.main_card] if self.main_card is not None else []
        for _r, original, typed in self.typed:
            out += [c for c in (original, typed) if c is not None]
        return out

    # ------------------------------------------------------------ building
    def refresh(self, *_args: Any) -> None:
        st = self.state
        if st is None:
            return
        sample, kind = st.sample, st.kind
        rec = st.readout() if sample is not None else None
        live = st.live_for_sample() if sample is not None else []
        before = self.original_for(st.index) if rec is not None else None
        key = (id(sample), id(rec), st.active, tuple(sorted(st.params.items())),
               tuple((r.id, id(r.benchmark), id(r.generic)) for r in live),
               None if before is None else id(before[0]))
        if key == self._key:
            return  # same records: keep the cards (and a hover in progress)
        if (self._key is not None and key[:1] + key[2:] == self._key[:1] + self._key[2:]
                and rec is not None and same_record(rec, self._rec) and not self._asked_summary):
            # the same values in another record (a worker's re-score installed after the first
            # frame drew the sample shown at these values), and no card read the set's summary
            # (which the other samples' records make): nothing to show anew
            self._key, self._rec = key, rec
            return
        self._key, self._rec = key, rec
        self._asked_summary = False
        clear_highlight(self.views())
        if sample is None or kind is None:
            self.main_card, self.typed, self._shape = None, [], None
            self._show([])
            return
        plan = self._plan(sample, kind, rec, live, corrected=before is not None)
        shape = tuple(_shape_of(entry) for entry in plan)  # any sample: the cards check their widgets
        self._before = before
        if before is None and self.original_card is None and shape == self._shape and self._update_in_place(plan):
            return
        self._shape = shape
        self._build(plan)

    def _plan(self, sample: Any, kind: Any, rec: Any, live: list[Any], *, corrected: bool = False) -> list[Any]:
        """What the deck shows, in order: a card is (class, record, context, focus, title), a
        line of text a :class:`_Text`, a row of typed cards is (result, original card or None, typed card)."""
        st = self.state
        preds = st.predictions()
        ctx = CardContext(kind, sample, dict(st.params), self._summary_for,
                          lambda pid: preds.get(pid) if preds is not None else None)
        card_cls = card_for(kind.name)
        plan: list[Any] = []
        if rec is not None:
            title = f"{kind.title or kind.name} · {st.active}"
            plan.append((card_cls, rec, ctx, None, f"corrected · {title}" if corrected else title))
        else:
            plan.append(_Text("No benchmark readout: open predictions (File › Open predictions…) "
                              "or type a prompt and Run.", bold=False))
        for r in live:
            plan.append(_Text(f"typed #{r.id} {r.label}", bold=True))
            original = typed = None
            if r.benchmark is not None and r.replaced is not None:
                if rec is not None:
                    base = next((p for p in sample.prompts if p.id == r.replaced), None)
                    original = (card_cls, rec, ctx, r.replaced,
                                f"original “{base.text if base else r.replaced}”")

                def typed_prediction(pid: str, r: Any = r) -> Any:
                    return r.prediction if pid == r.replaced else ctx.prediction(pid)

                typed_ctx = CardContext(kind, _with_text(sample, r.replaced, r.prompt.text), ctx.params,
                                        self._summary_for, typed_prediction)
                typed = (card_cls, r.benchmark, typed_ctx, r.replaced, f"typed “{r.prompt.text}”")
            else:
                typed = (GenericReadoutCard, r.generic, ctx, None,
                         f"typed “{r.prompt.text}” (no {r.prompt.role.value} prompt to replace)")
            plan.append((r, original, typed))
        return plan

    def _update_in_place(self, plan: list[Any]) -> bool:
        """The same cards (a slider step, or another sample of the same shape): each card shows
        its new record on its own widgets; False when one of them needs other widgets (the
        deck is then rebuilt)."""
        cards = iter(self.cards)
        typed: list[tuple[Any, ReadoutCard | None, ReadoutCard]] = []
        for entry in plan:
            if isinstance(entry, _Text):
                continue
            if len(entry) == 5:  # the main card
                if not next(cards).update_record(entry[1], entry[2], entry[4]):
                    return False
                continue
            r, original, spec = entry
            shown = []
            for spec_ in (original, spec):
                if spec_ is not None:
                    card = next(cards)
                    if not card.update_record(spec_[1], spec_[2], spec_[4]):
                        return False
                    shown.append(card)
            typed.append((r, shown[0] if original is not None else None, shown[-1]))
        self.typed = typed  # the same cards, now for the new results
        return True

    def _build(self, plan: list[Any]) -> None:
        self.main_card, self.typed, self.original_card = None, [], None
        widgets: list[QWidget] = []
        for entry in plan:
            if isinstance(entry, _Text):
                widgets.append(wrapped(entry.text, bold=entry.bold, muted=not entry.bold))
                continue
            if len(entry) == 5:
                self.main_card = _make(entry)
                self.main_card.hovered.connect(self._hover_benchmark)
                widgets.append(self.main_card)
                if self._before is not None:  # a corrected sample: the original ground truth's card above it
                    cls, _rec, ctx, focus, title = entry
                    octx = dataclasses.replace(ctx, sample=self._before[1])
                    self.original_card = cls(self._before[0], octx, focus=focus,
                                             title="original · " + title.removeprefix("corrected · "))
                    # one above the other: side by side, the corrected card needed a sideways
                    # scroll in the dock's width and the switch widened the dock
                    widgets[-1:] = [self.original_card, self.main_card]
                continue
            r, original_spec, typed_spec = entry
            original = _make(original_spec) if original_spec is not None else None
            if original is not None:
                original.hovered.connect(self._hover_benchmark)
            typed = _make(typed_spec)
            # the result is looked up when hovered: an in-place update brings a newer one
            typed.hovered.connect(lambda pid, i, rid=r.id: self._hover_typed(self._result(rid), pid, i))
            self.typed.append((r, original, typed))
            widgets.append(_side_by_side([c for c in (original, typed) if c is not None]))
        self._show(widgets)

    def _result(self, result_id: Any) -> Any:
        return next((r for r, _o, _t in self.typed if r.id == result_id), None)

    def _show(self, widgets: list[QWidget]) -> None:
        """Swap the rows in place (the old ones are deleted later: deleting and re-polishing a
        whole scroll-area widget cost ~10 ms per sample switch); the scroll position stays."""
        while self._rows.count() > 1:
            item = self._rows.takeAt(0)
            old = item.widget() if item is not None else None
            if old is not None:  # every row but the last (a stretch) is a widget
                old.hide()
                old.deleteLater()
        for i, w in enumerate(widgets):
            self._rows.insertWidget(i, w)

    def _summary_for(self) -> Any:
        """The active set's summary at the current parameters (benchmark-level values, e.g. OVS τ*),
        from the core scorer's cached overlaps; computed once per (set, parameters) — on the worker
        pool for a large benchmark (the card shows it when it arrives; the latest request wins)."""
        st = self.state
        self._asked_summary = True
        scorer = st.scorers.get(st.active) if st is not None and st.active else None
        rows = st.readouts.get(st.active) if scorer is not None else None
        if scorer is None or rows is None:
            return None
        key = (id(scorer), id(rows), tuple(sorted(st.params.items())))
        if key == self._summary_key:
            return self._summary
        kind, samples, params = st.kind, st.benchmark.samples, st.kind.resolve_params(st.params)

        def compute() -> Any:
            return kind.summarize(samples, scorer.overlaps, rows, params)

        if len(samples) <= SYNC_SUMMARY_LIMIT:
            self._summary, self._summary_key = compute(), key
            return self._summary
        if self._pending != key:
            self._pending = key
            worker = create_worker(compute)
            worker.returned.connect(lambda value, k=key: self._summary_arrived(k, value))
            worker.errored.connect(lambda exc, k=key: self._summary_failed(k, exc))
            worker.start()
        return None

    def _summary_failed(self, key: Any, exc: BaseException) -> None:
        log.error("benchmark summary for the readout card failed: %s: %s", type(exc).__name__, exc)
        if key == self._pending:
            self._pending = None

    def _summary_arrived(self, key: Any, value: Any) -> None:
        if key != self._pending:  # parameters moved on meanwhile: a newer request is running
            return
        self._pending = None
        self._summary, self._summary_key = value, key
        self._key = None  # rebuild the cards with it
        self.refresh()

    # ------------------------------------------------------------ hover → canvas
    def _hover_benchmark(self, prompt_id: str, index: int) -> None:
        preds = self.state.predictions() if self.state is not None else None
        pred = preds.get(prompt_id) if preds is not None else None
        self._highlight(prompt_id, pred, index)

    def _hover_typed(self, result: Any, prompt_id: str, index: int) -> None:
        if result is None:
            return
        if prompt_id == result.replaced or result.replaced is None:
            self._highlight(f"live:{result.id}", result.prediction, index)
        else:
            self._hover_benchmark(prompt_id, index)

    def _highlight(self, canvas_prompt: str, prediction: Any, index: int) -> None:
        views = self.views()
        if index < 0 or prediction is None or index >= len(prediction.instances):
            clear_highlight(views)
            return
        show_highlight(views, canvas_prompt, prediction.instances[index].mask)


def _with_text(sample: Any, prompt_id: str, text: str) -> Any:
    """The sample as the typed record was scored: the replaced prompt carries the typed text."""
    prompts = [dataclasses.replace(p, text=text) if p.id == prompt_id else p for p in sample.prompts]
    return dataclasses.replace(sample, prompts=prompts)


class _Text(NamedTuple):
    text: str
    bold: bool


def _shape_of(entry: Any) -> Any:
    """What must stay equal for a refresh to keep an entry's widgets."""
    if isinstance(entry, _Text):
        return entry
    if len(entry) == 5:
        return (entry[0], entry[3])
    r, original, typed = entry
    return (r.id, None if original is None else (original[0], original[3]), (typed[0], typed[3]))


def _make(spec: tuple[Any, ...]) -> ReadoutCard:
    cls, record, ctx, focus, title = spec
    return cls(record, ctx, focus=focus, title=title)


def _side_by_side(cards: list[ReadoutCard]) -> QWidget:
    row = QWidget()
    lay = QHBoxLayout(row)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(4)
    for c in cards:
        c.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        lay.addWidget(c, 1, Qt.AlignmentFlag.AlignTop)
    if len(cards) == 1:
        lay.addWidget(QLabel(""), 1)
    return row
