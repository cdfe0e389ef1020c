"""Review as a team, in the Review dock: the reviewer's queue progress, Cohen's κ per pair of
reviewers, and the Disagreements view (samples where reviewers' verdicts or corrections differ,
one column per reviewer, side by side; a double click opens the sample). The browser's
"Disagreements" preset filters on the ``review.disagree`` column this module adds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import shiboken6
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from masklens.gui.browser.filters import register_presets
from masklens.gui.window.context import WindowPart

if TYPE_CHECKING:
    from masklens.gui.review.corrected_view import CorrectedView
    from masklens.gui.review.corrections_link import CorrectionsLink
    from masklens.gui.review.panel import ReviewPanel
    from masklens.gui.state import AppState

register_presets("*", [("Disagreements", "review.disagree == 1")])


class TeamContext(WindowPart, Protocol):
    """What the team view uses of the window: the state (store, benchmark, sample), the Review
    dock it is built into, the corrected view (the original benchmark's key) and the
    corrections link (told when Undo retracts a correction)."""

    state: AppState
    review_panel: ReviewPanel
    corrected_view: CorrectedView
    corrections_link: CorrectionsLink


class TeamView(QObject):
    """Built into the window's Review dock (``window.review_panel``)."""

    #: the ``review.disagree`` values of the browser's records changed (``browser_rows``)
    rowsChanged = Signal()

    def __init__(self, window: TeamContext) -> None:
        super().__init__(window.window())
        self.window = window
        self.rows: dict[str, dict[str, str]] = {}  # sample id -> reviewer -> what they said
        self.pairs: list[dict[str, Any]] = []
        self.box = QWidget()
        lay = QVBoxLayout(self.box)
        lay.setContentsMargins(0, 0, 0, 0)
        self.progress = QLabel("")
        self.progress.setToolTip("your queue (masklens review assign): samples with your verdict or "
                                 "correction / samples assigned to you")
        self.kappas = QLabel("")
        self.kappas.setWordWrap(True)
        self.kappas.setToolTip("Cohen's κ per pair of reviewers, over the items both judged")
        self.title = QLabel("Disagreements")
        self.title.setStyleSheet("font-weight: 600")
        self.tree = QTreeWidget()
        self.tree.setToolTip("samples where reviewers' verdicts or corrections differ; double-click opens one")
        self.tree.itemActivated.connect(lambda item, _c: self._open(item.text(0)))
        for w in (self.progress, self.kappas, self.title, self.tree):
            lay.addWidget(w)
        self.tree.setMinimumHeight(110)
        self.tree.setRootIsDecorated(False)
        self.box.setVisible(False)  # shown once there is a team (a queue, or two reviewers' verdicts)
        panel = window.review_panel
        panel.add_section(self.box)
        panel.verdictRecorded.connect(lambda *_: self.refresh())
        panel.storeChanged.connect(self.refresh)  # e.g. an assignment made while the window is open
        panel.reviewerChanged.connect(lambda _: self._show_progress())
        panel.correctionRetracted.connect(lambda *_: window.corrections_link.changed())
        window.state.benchmarkChanged.connect(self.refresh)
        window.state.sampleChanged.connect(lambda *_: self._show_progress())

    def _key(self) -> str | None:
        from masklens.core.review.locations import benchmark_key

        bench = self.window.corrected_view.original_benchmark or self.window.state.benchmark
        return benchmark_key(bench) if bench is not None else None

    def refresh(self) -> None:
        """Read the store again: κ per pair, the disagreements, the queue progress (on a thread
        when the store is large, as the panel's agreement line)."""
        from masklens.gui.review import panel as panel_module

        store, key = self.window.state.review_store, self._key()
        if store is None or key is None:
            self._apply({}, [])
            return
        if store.stamp()[0] <= panel_module.INLINE_AGREEMENT_ROWS:
            self._apply(*team_figures(store, key))
            return
        from superqt.utils import create_worker

        from masklens.gui.jobs.workers import gui_friendly

        def work() -> tuple[dict[str, dict[str, str]], list[Any]]:
            with gui_friendly():
                return team_figures(store, key)

        token = self._token = object()

        def done(figures: tuple[dict[str, dict[str, str]], list[Any]]) -> None:
            if self._token is token and shiboken6.isValid(self.box):
                self._apply(*figures)

        worker = create_worker(work, _start_thread=False, _ignore_errors=True)
        worker.returned.connect(done)
        self._worker = worker  # kept until the next one
        worker.start()

    def _apply(self, rows: dict[str, dict[str, str]], pairs: list[Any]) -> None:
        had = bool(self.pairs)
        self.rows, self.pairs = rows, pairs
        self._show()
        self._show_progress()
        if had or self.pairs:  # the browser's review.disagree column (none without a team)
            self.rowsChanged.emit()

    def _show(self) -> None:
        reviewers = sorted({r for per in self.rows.values() for r in per})
        self.tree.clear()
        self.tree.setColumnCount(1 + len(reviewers))
        self.tree.setHeaderLabels(["sample", *reviewers])
        for sid, per in self.rows.items():
            QTreeWidgetItem(self.tree, [sid, *(_labelled(per.get(r, "–")) for r in reviewers)])
        for i in range(self.tree.columnCount()):
            self.tree.resizeColumnToContents(i)
        self.title.setText(f"Disagreements ({len(self.rows)})")
        lines = [f"{p['a']} – {p['b']}: κ = {'undefined' if p['cohen_kappa'] is None else format(p['cohen_kappa'], '.3f')}"
                 f" over {p['items']} item(s)" for p in self.pairs]
        self.kappas.setText("\n".join(lines) if lines else "κ per pair: needs two reviewers' verdicts "
                            "(merge their stores: masklens review merge)")

    def _show_progress(self) -> None:
        panel, store, key = self.window.review_panel, self.window.state.review_store, self._key()
        queued = store is not None and key is not None and bool(panel.my_queue())
        self.box.setVisible(bool(self.pairs) or queued)
        if not queued:
            self.progress.setText("")
            return
        done, total = store.progress(key, panel.who())
        self.progress.setText(f"Your queue ({panel.who()}): {done}/{total} done")

    def browser_rows(self, rows: Any) -> Any:
        """Records with ``review.disagree`` (0/1) when two or more reviewers have judged."""
        bench = self.window.state.benchmark
        if rows is None or not self.pairs or bench is None:
            return rows
        return [{**dict(r), "review": {"disagree": int(s.id in self.rows)}}
                for r, s in zip(rows, bench.samples, strict=True)]

    def _open(self, sample_id: str) -> None:
        bench = self.window.state.benchmark
        ids = [s.id for s in bench.samples] if bench is not None else []
        if sample_id in ids:
            self.window.state.set_index(ids.index(sample_id))


def _labelled(text: str) -> str:
    """A reviewer's verdict keys (``gt_wrong``, ``p1: fine``) in the buttons' words."""
    from masklens.core.review.verdict_types import VERDICT_TYPES

    def one(part: str) -> str:
        where, _, key = part.rpartition(": ")
        vt = VERDICT_TYPES.get(key)
        return part if vt is None else (f"{where}: {vt.label}" if where else vt.label)

    return "; ".join(one(p) for p in text.split("; "))


def team_figures(store: Any, key: str) -> tuple[dict[str, dict[str, str]], list[Any]]:
    """The disagreements and κ per pair of a benchmark's current verdicts and corrections."""
    from masklens.core.review.agreement import agreement, disagreements

    current = store.current(key)
    return disagreements(current, store.corrections(key)), agreement(current).pairs
