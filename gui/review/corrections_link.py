"""Ground-truth corrections from the window into the review store, and out again (docs/gui.md).

:class:`CorrectionsLink` records every edit accepted in Correct mode
(``window.correction.accepted``) in the benchmark's review store through
:class:`~masklens.core.review.recorder.CorrectionRecorder`: the reviewer named in the Review dock,
its Note field, the tools of the edit's operations, and the uid of the sample's latest "Ground truth wrong"
verdict when there is one. Each correction goes on the Review dock's undo stack, so Ctrl+Z
(outside an edit) retracts it as it retracts a verdict. File › Apply corrections… writes the
corrected benchmark with :func:`~masklens.core.review.apply.apply_corrections` (the code of
``masklens review apply``); File › Export verdicts/corrections… writes both as JSON.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog

from masklens.core.errors import MasklensError
from masklens.gui.window.context import WindowPart

if TYPE_CHECKING:
    from masklens.gui.correct.tool import CorrectionTool
    from masklens.gui.review.corrected_view import CorrectedView
    from masklens.gui.review.panel import ReviewPanel
    from masklens.gui.review.team import TeamView
    from masklens.gui.state import AppState
    from masklens.gui.window.message_bar import MessageBar

log = logging.getLogger(__name__)

class CorrectionsLinkContext(WindowPart, Protocol):
    """What the link uses of the window: the state (store, benchmark, sample), the correction
    tool whose accepted edits it records, the Review dock (reviewer, note, undo), the corrected
    view and the team view (both follow a recorded correction) and the message bar."""

    state: AppState
    correction: CorrectionTool
    review_panel: ReviewPanel
    corrected_view: CorrectedView
    team: TeamView
    message_bar: MessageBar


class CorrectionsLink(QObject):
    def __init__(self, window: CorrectionsLinkContext) -> None:
        super().__init__(window.window())
        self.window = window
        self.last: Any = None  # the newest correction recorded here
        window.correction.accepted.connect(self.persist)
        window.correction.recategorized.connect(self.persist_category)
        self.apply_action = QAction("Apply corrections…", window.window())
        self.apply_action.setToolTip("write the benchmark with the ground-truth corrections applied "
                                     "(as `masklens review apply`), plus a changelog")
        self.apply_action.triggered.connect(lambda: self.apply_dialog())
        self.export_action = QAction("Export verdicts/corrections…", window.window())
        self.export_action.setToolTip("write this benchmark's verdicts and corrections as JSON")
        self.export_action.triggered.connect(lambda: self.export_dialog())
        #: how a path is asked for (tests answer it): (caption, suggested path, filter) -> path or ""
        self.ask_path = _ask_path

    # ------------------------------------------------------------ recording
    def reviewer(self) -> str:
        panel = self.window.review_panel
        store = self.window.state.review_store
        name = panel.reviewer.text().strip()
        return name or (store.reviewer if store is not None else "")

    def persist_category(self, sample_id: str, gt_key: str, instance: int, category: Any) -> Any:
        """Record a category change: the instance's current mask with the new category."""
        sample = self.window.state.sample
        if sample is None:
            return None
        gt = sample.gts[gt_key]
        return self.persist(sample_id, gt_key, instance, gt.masks[instance], category=category, keep_mask=True)

    def persist(self, sample_id: str, gt_key: str, instance: int | None, mask: Any,
                tools: Sequence[str] = (), category: Any = None, *, keep_mask: bool = False) -> Any:
        """Record an accepted edit (``tools``: those of its operations) in the review store,
        committed before this returns, by the rules of
        :class:`~masklens.core.review.recorder.CorrectionRecorder`; shown, never a crash."""
        from masklens.core.review.locations import benchmark_key
        from masklens.core.review.recorder import CorrectionRecorder, Edit

        w = self.window
        store, view = w.state.review_store, w.corrected_view
        bench = view.original_benchmark or w.state.benchmark
        if store is None or bench is None:
            w.message_bar.show_message("correction not recorded: no review store is open", "error")
            return None
        shown_from, shown_key = None, None
        if view.on and w.state.sample is not None:  # edited on the corrected ground truth: its indices map back
            shown = w.state.sample.gts.get(gt_key)
            shown_from = (shown.meta.get("corrected_from") if shown is not None else None) or []
            shown_key = shown.key if shown is not None else None
        panel = w.review_panel
        note = panel.note.text().strip()
        edit = Edit(sample_id, gt_key, instance, mask, tuple(tools), category, keep_mask)
        try:
            c = CorrectionRecorder(store, benchmark_key(bench)).record(
                edit, reviewer=self.reviewer(), note=note, shown_from=shown_from, shown_gt_key=shown_key)
        except Exception as exc:  # noqa: BLE001 - e.g. sqlite3.OperationalError: shown, never a crash
            w.message_bar.show_message(f"correction not recorded: {type(exc).__name__}: {exc}", "error")
            return None
        self.last = c
        panel.correction_recorded(c)
        self.changed()
        return c

    def changed(self) -> None:
        """A correction was recorded or retracted: the corrected view and the team views follow."""
        w = self.window
        w.corrected_view.reapply()
        w.team.refresh()

    # ------------------------------------------------------------ out
    def benchmark_files(self) -> dict[str, Any]:
        """The open benchmark's ground-truth files (the loader's keywords), predictions left out."""
        from masklens.core.scoring.kind_args import kind_files, kind_parser, prediction_actions

        kind, ns = self.window.state.kind, self.window.state.namespace
        if kind is None or ns is None:
            return {}
        preds = {a.dest for a in prediction_actions(kind_parser(kind))}
        return {k: v for k, v in kind_files(kind, ns).items() if k not in preds}

    def apply_to(self, out: str | Path) -> Any:
        """Write the corrected benchmark at ``out`` (and its changelog); returns what was written."""
        from masklens.core.review.apply import apply_corrections

        w = self.window
        store = w.state.review_store
        if store is None or w.state.kind is None:
            raise MasklensError("open a benchmark first")
        done = apply_corrections(w.state.kind, self.benchmark_files(), [store.path], out)
        w.message_bar.show_message(
            f"applied {done.corrections} correction(s) to {done.samples} sample(s): wrote "
            f"{', '.join(map(str, done.written))} and {done.changelog}", "info")
        return done

    def export_to(self, out: str | Path) -> Path:
        from masklens.core.review.apply import export_review
        from masklens.core.review.locations import benchmark_key

        w = self.window
        store = w.state.review_store
        if store is None or w.state.benchmark is None:
            raise MasklensError("open a benchmark first")
        bench = w.corrected_view.original_benchmark or w.state.benchmark
        path = export_review(store, out, benchmark_key(bench))
        w.message_bar.show_message(f"wrote {path}", "info")
        return path

    def apply_dialog(self) -> bool:
        return self._dialog("Apply corrections: write the corrected benchmark", "corrected.json",
                            "JSON (*.json);;any (*)", self.apply_to)

    def export_dialog(self) -> bool:
        return self._dialog("Export verdicts and corrections", "review-export.json", "JSON (*.json)",
                            self.export_to)

    def _dialog(self, caption: str, name: str, filters: str, do: Any) -> bool:
        w = self.window
        if w.state.benchmark is None or w.state.review_store is None:
            w.message_bar.show_message("open a benchmark first", "warning")
            return False
        # suggested beside the review store: the data's folder when writable, never the bundled demo
        folder = Path(w.state.review_store.path).parent
        path = self.ask_path(w.window(), caption, str(folder / name), filters)
        if not path:
            return False
        try:
            do(path)
        except MasklensError as exc:
            w.message_bar.show_message(str(exc), "error")
            return False
        return True


def _ask_path(parent: Any, caption: str, suggested: str, filters: str) -> str:
    return QFileDialog.getSaveFileName(parent, caption, suggested, filters)[0]
