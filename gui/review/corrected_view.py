"""The "Corrected ground truth" switch (View menu and view toolbar; docs/gui.md).

On, every prediction set is scored against the ground truth with the review store's effective
corrections applied (:func:`~masklens.core.review.corrections.corrected_scorer`: only the
corrected samples' threshold-free stage is read again), the window's benchmark is the corrected
one (the canvas draws the corrected masks), the card of a corrected sample shows the original
record above the corrected one, the browser gets ``corrected.*`` columns (with
``corrected.changed``) and the summary (:class:`SummaryTable`) shows both. Off, the original
scorers come back untouched.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from masklens.core.errors import MasklensError
from masklens.gui.browser.filters import register_presets
from masklens.gui.window.context import WindowPart

if TYPE_CHECKING:
    from masklens.gui.review.corrections_link import CorrectionsLink
    from masklens.gui.state import AppState
    from masklens.gui.window.message_bar import MessageBar

log = logging.getLogger(__name__)


register_presets("*", [("changed by corrections", "corrected.changed == 1")])


class SummaryTable(QTableWidget):
    """Benchmark-level metrics of the active set (all samples): original and corrected columns.

    :meth:`show_later` takes where the values come from; they are summarised when the table is
    shown or its ``values`` read, not while it is hidden (a whole-benchmark summary on every
    slider step and sample switch that nobody sees)."""

    def __init__(self) -> None:
        super().__init__(0, 3)
        self.setHorizontalHeaderLabels(["metric", "original", "corrected"])
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        self.setToolTip("the active prediction set over all samples; the metrics the corrections "
                        "changed come first")
        self._values: dict[str, tuple[Any, Any]] = {}
        self._source: Callable[[], tuple[dict[str, Any], dict[str, Any] | None] | None] | None = None

    @property
    def values(self) -> dict[str, tuple[Any, Any]]:
        """metric → (original, corrected) as shown (summarised now if that was put off)."""
        self._flush()
        return self._values

    def show_later(self, source: Callable[[], tuple[dict[str, Any], dict[str, Any] | None] | None]) -> None:
        """Show ``source()`` (original, corrected; None: keep what is shown): at once when the
        table is visible, else when it is shown or read."""
        self._source = source
        if self.isVisible():
            self._flush()

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self._flush()
        super().showEvent(event)

    def _flush(self) -> None:
        source, self._source = self._source, None
        got = source() if source is not None else None
        if got is not None:
            self.show_values(*got)

    def show_values(self, original: dict[str, Any], corrected: dict[str, Any] | None) -> None:
        self._source = None  # these, not an older pending summary
        keys = [k for k, v in original.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        values = {k: (original[k], (corrected or {}).get(k)) for k in keys}
        keys.sort(key=lambda k: corrected is None or values[k][0] == values[k][1])  # what moved first
        self._values = {k: values[k] for k in keys}
        self.setRowCount(len(keys))
        for i, k in enumerate(keys):
            a, b = self._values[k]
            for j, text in enumerate((k, _fmt(a), "" if corrected is None else _fmt(b))):
                self.setItem(i, j, QTableWidgetItem(text))
        self.resizeColumnsToContents()


def _fmt(v: Any) -> str:
    return f"{v:.4f}" if isinstance(v, float) else str(v)


class CorrectedViewContext(WindowPart, Protocol):
    """What the switch uses of the window: the state it scores and draws, the message bar, and
    the corrections link (whose reviewer's corrections win a conflict)."""

    state: AppState
    message_bar: MessageBar
    corrections_link: CorrectionsLink


class CorrectedView(QObject):
    """The switch and what follows it."""

    def __init__(self, window: CorrectedViewContext) -> None:
        super().__init__(window.window())
        self.window = window
        self.on = False
        self.original_benchmark: Any = None
        self.originals: dict[str, Any] = {}  # set name -> the original scorer
        self.changed: set[str] = set()  # ids of the corrected samples
        self.summary = SummaryTable()
        self._original_rows: tuple[Any, Any] = (None, None)  # (scorer id, params) -> original records
        self._busy = False
        self.action = QAction("Corrected ground truth", window.window(), checkable=True)
        self.action.setObjectName("corrected-ground-truth")
        self.action.setToolTip("score and draw with the review store's ground-truth corrections applied "
                               "(the benchmark's files are never changed)")
        self.action.toggled.connect(self.set_on)
        st = window.state
        st.benchmarkChanged.connect(self._benchmark_changed)
        st.predictionsChanged.connect(self._predictions_changed)
        st.readoutsChanged.connect(self.refresh_summary)

    # ------------------------------------------------------------ switching
    def set_on(self, on: bool) -> None:
        if on == self.on:
            return
        if on and self.window.state.benchmark is None:
            self.action.setChecked(False)
            return
        self.on = on
        if self.action.isChecked() != on:
            self.action.setChecked(on)
        if on:
            self.original_benchmark = self.window.state.benchmark
            self.originals = dict(self.window.state.scorers)
            self.reapply()
        else:
            self._restore()

    def reapply(self) -> None:
        """Apply the store's current corrections again (after one was recorded or undone)."""
        if not self.on:
            self.refresh_summary()
            return
        w = self.window
        rows = self.corrections()
        try:
            from masklens.core.review.corrections import corrected_benchmark, corrected_scorer

            scorers = {n: corrected_scorer(sc, rows) for n, sc in self.originals.items()}
            bench = (next(iter(scorers.values())).benchmark if scorers
                     else corrected_benchmark(self.original_benchmark, rows))
        except MasklensError as exc:
            w.message_bar.show_message(f"corrections not applied: {exc}", "error")
            self.action.setChecked(False)
            return
        self.changed = {c.sample_id for c in rows}
        self._install(bench, scorers)

    def _restore(self) -> None:
        if self.original_benchmark is not None:
            self._install(self.original_benchmark, dict(self.originals))
        self.original_benchmark, self.originals, self.changed = None, {}, set()
        self.refresh_summary()

    def _install(self, bench: Any, scorers: dict[str, Any]) -> None:
        st = self.window.state
        self._busy = True
        try:
            st.replace_ground_truth(bench, scorers)
        finally:
            self._busy = False
        self.refresh_summary()

    def corrections(self) -> list[Any]:
        """The effective corrections of the open benchmark (all reviewers'; where reviewers
        conflict, only this reviewer's are applied and the window says so)."""
        from masklens.core.review.corrections import correction_conflicts
        from masklens.core.review.locations import benchmark_key

        store, bench = self.window.state.review_store, self.original_benchmark or self.window.state.benchmark
        if store is None or bench is None:
            return []
        key = benchmark_key(bench)
        rows = store.corrections(key)
        if correction_conflicts(rows):
            who = self.window.corrections_link.reviewer()
            self.window.message_bar.show_message(
                f"reviewers corrected some instances differently: showing {who}'s corrections only "
                "(see Disagreements)", "warning")
            rows = store.corrections(key, reviewer=who)
        return rows

    def _benchmark_changed(self) -> None:
        if self._busy:
            return
        self.on, self.original_benchmark, self.originals, self.changed = False, None, {}, set()
        self.action.blockSignals(True)
        self.action.setChecked(False)
        self.action.blockSignals(False)
        self.summary.show_values({}, None)

    def _predictions_changed(self) -> None:
        if self._busy or not self.on:
            return
        fresh = {n: sc for n, sc in self.window.state.scorers.items() if n not in self.originals}
        if fresh:  # a set opened while the switch is on: scored against the original, corrected here
            self.originals.update(fresh)
            self.reapply()

    # ------------------------------------------------------------ what the window shows
    def original_readout(self, index: int) -> Any:
        """(original record, original sample) of a corrected sample while on, else None."""
        st = self.window.state
        sc = self.originals.get(st.active or "")
        if not self.on or sc is None or st.kind is None or index >= len(sc.benchmark.samples):
            return None
        sample = sc.benchmark.samples[index]
        if sample.id not in self.changed:
            return None
        rec = st.kind.sample_readouts([sample], [sc.overlaps[index]], st.params)[0]
        return rec, sample

    def browser_rows(self, rows: Any) -> Any:
        """Browser records: while on, the original records with the corrected ones as
        ``corrected.*`` (and ``corrected.changed`` 0/1)."""
        st = self.window.state
        sc = self.originals.get(st.active or "")
        if not self.on or rows is None or sc is None:
            return rows
        key = (id(sc), tuple(sorted(st.params.items())))
        if self._original_rows[0] != key:  # a slider move derives them again, once
            self._original_rows = (key, sc.readouts(st.params))
        originals = self._original_rows[1]
        samples = sc.benchmark.samples
        return [{**dict(o), "corrected": {**dict(c), "changed": int(s.id in self.changed)}}
                for o, c, s in zip(originals, rows, samples, strict=True)]

    def summaries(self) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The active set's summary (its first group: all samples) for the original and (while on) the corrected
        ground truth."""
        st = self.window.state
        name = st.active or ""
        orig = self.originals.get(name) if self.on else st.scorers.get(name)
        kind = st.kind
        if orig is None or kind is None:
            return {}, None
        params = kind.resolve_params(st.params)

        def summary(sc: Any) -> dict[str, Any]:
            rows = sc.readouts(params)
            groups = kind.summarize(sc.benchmark.samples, sc.overlaps, rows, params)
            return dict(next(iter(groups.values()), {}))  # the first group: every sample

        return summary(orig), summary(st.scorers[name]) if self.on else None

    def refresh_summary(self, *_: Any) -> None:
        """The summary for the current set and parameters (computed when it can be seen)."""
        if not self._busy:
            self.summary.show_later(self._summaries)

    def _summaries(self) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
        try:
            return self.summaries()
        except MasklensError as exc:  # shown, never a crash
            log.warning("summary unavailable: %s", exc)
            return None
