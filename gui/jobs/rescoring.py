"""Slider re-scoring that never blocks the window: the sample shown is re-derived at once (the
first frame), every sample in the worker pool, and the latest slider value wins.

Below :data:`ASYNC_FROM` samples a full re-derivation takes a few milliseconds and is done in
place. Above it, :meth:`Rescoring.request` derives the sample shown on the GUI thread, then runs
``Scorer.readouts`` plus the browser's filtering and sorting (:meth:`SampleBrowser.planner`)
on a worker; a result for values that are no longer the slider's is dropped, an older job is
cancelled at its next check. The window installs the result in one step (``prepared_for``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Signal
from PySide6.QtWidgets import QWidget

from masklens.core.runtime import gc_pause
from masklens.gui.jobs.workers import JobRunner

if TYPE_CHECKING:
    from masklens.gui.browser.sample_browser import SampleBrowser
    from masklens.gui.state import AppState

#: benchmarks with at least this many samples are re-scored in the worker pool
ASYNC_FROM = 2000


def _derive(ctx: Any, scorer: Any, params: dict[str, float], prepare: Any) -> tuple[list, Any]:
    """Runs as a job (the switch interval shortened, gui/jobs/workers.py). Records are built
    when read: the rows shown, and what a filter or sort reads as whole columns, taken from the
    kind's own columns where it has them (:meth:`Records.column`). Hundreds of thousands of new
    (acyclic) dicts would trigger full cyclic collections over every object of the benchmark,
    each a GIL-held pause of the window: none while deriving, and what survives (readouts,
    flattened rows) is long-lived, frozen after (gc_pause.collected_later)."""
    with gc_pause.collected_later():
        readouts = scorer.readouts(params)
        ctx.check()
        return readouts, prepare(readouts, ctx.check)


def paint_first_frame(window: QWidget) -> None:
    """Lay out and paint what is waiting to be painted in ``window`` now (the sample shown at the
    new values), instead of waiting for the event loop: the worker can then start at once
    (it used to wait 20 ms for the paint, every step)."""
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    QCoreApplication.sendPostedEvents(window, QEvent.Type.UpdateRequest)


class Rescoring(QObject):
    """Owned by the window; ``settled`` once the browser shows the latest values."""

    settled = Signal()

    def __init__(self, state: AppState, browser: SampleBrowser, parent: QObject | None = None, *,
                 columns_key: Callable[[], Any] | None = None) -> None:
        super().__init__(parent)
        self.state, self.browser = state, browser
        self.runner = JobRunner(self)  # not the window's jobs: no busy state, no Cancel button
        self._serial = 0
        self._prepared: tuple[Any, Any] | None = None  # (readouts, Prepared) awaiting installation
        self.pending = False
        self._first_frame: tuple[int, dict[str, float]] | None = None  # (sample index, values) drawn
        self._installing = False
        #: what the list's metric columns depend on (the window's ``columns_key``): the same as
        #: the list's, the worker keeps its columns instead of reading them from the records again
        self.columns_key: Callable[[], Any] = columns_key or (lambda: (id(state.benchmark), state.active))

    def request(self, params: dict[str, float]) -> None:
        """New slider values (may raise MasklensError for values out of range)."""
        st = self.state
        if st.kind is None:
            return
        n = len(st.benchmark.samples) if st.benchmark is not None else 0
        if n < ASYNC_FROM or st.active not in st.scorers:
            st.set_params(params)
            self.settled.emit()
            return
        st.set_params_shown(params)  # the first frame: the sample shown, at once
        self._first_frame = (st.index, dict(st.params))
        self._serial += 1
        serial, name, p = self._serial, st.active, dict(st.params)
        self.runner.cancel_all()  # an older value still being derived: stop it at its next check
        self.pending = True
        planner = self.browser.planner(columns_key=self.columns_key())  # as the window keys them

        def done(value: tuple[Any, Any]) -> None:
            if serial != self._serial:
                return  # a later value is on its way
            readouts, prepared = value
            self._prepared, self._installing = (readouts, prepared), True
            try:
                st.install_readouts(name, p, readouts)
            finally:
                self._prepared, self._installing = None, False
                self.pending = False
                self.settled.emit()

        paint_first_frame(self.browser.window())  # now: the worker would compete for the GIL
        self.runner.run("re-score", _derive, st.scorers[name], p, planner, on_done=done)

    @staticmethod
    def settle_heap() -> None:
        """After a prediction set is scored: its millions of long-lived objects leave the cyclic
        collector's scans (``gc.freeze``), so no later collection walks them with the GIL held in
        the middle of a slider move. Reference counting still frees them when they are dropped."""
        gc_pause.freeze()

    def shown_is_current(self) -> bool:
        """While a worker's readouts are installed: whether the sample shown was already drawn
        (the first frame) at exactly these values, so that only the list needs them."""
        st = self.state
        return self._installing and self._first_frame == (st.index, dict(st.params))

    def prepared_for(self, readouts: Any) -> Any:
        """The browser's ready rows for exactly these readouts (None: plan them here)."""
        if self._prepared is not None and self._prepared[0] is readouts:
            return self._prepared[1]
        return None
