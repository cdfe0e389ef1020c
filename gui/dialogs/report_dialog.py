"""File › Export report…: write the HTML/CSV/JSON report of the window's prediction sets.

The report reuses the window's scorers (their cached overlaps) at the current
slider values, so exporting never re-runs a model and never re-reads a mask
for scoring; it runs off the GUI thread with progress and cancel, and the
folder is written atomically (a cancelled export leaves no half report).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from masklens.core.errors import MasklensError
from masklens.core.reports import ReportOptions, build_report
from masklens.core.reports.runs import ModelRun, run_provenance
from masklens.gui.dialogs.job_dialog import JobDialog
from masklens.gui.jobs.workers import JobContext
from masklens.gui.state import AppState


class ReportDialog(JobDialog):
    cancelled_text = "cancelled — nothing was written"

    def __init__(self, parent: QWidget | None, state: AppState) -> None:
        """Over ``state``'s open benchmark (:func:`open_report_dialog` says when there is none)."""
        kind, bench = state.kind, state.benchmark
        if kind is None or bench is None:
            raise MasklensError("open a benchmark first (File › Open benchmark…)")
        super().__init__(parent, state, "Export report", 560)
        self.written: Path | None = None
        self.models = QListWidget()
        order = state.set_order()
        for i, name in enumerate(n for n in order if n in state.scorers):
            item = QListWidgetItem(name)
            if i == 0 and len(state.scorers) > 1:  # the report compares the others against it
                item.setText(f"{name}  (A: the reference, the set shown in the window)")
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.models.addItem(item)
        self.models.setMaximumHeight(110)
        default_dir = default_report_dir(bench)
        self.out = QLineEdit(str(default_dir))
        out_row = self.folder_row(self.out, "Report folder (created or replaced)")
        self.title = QLineEdit(f"{kind.title or kind.name} report — {bench.title}")  # as `masklens report` titles it
        self.gallery = QSpinBox()
        self.gallery.setRange(0, 50)
        self.gallery.setValue(4)
        self.sweep = QCheckBox("threshold sweep")
        self.sweep.setChecked(True)
        self.reviews = QCheckBox("reviewers' verdicts")
        self.reviews.setChecked(state.review_store is not None)
        self.reviews.setEnabled(state.review_store is not None)
        params = ", ".join(f"{k} = {v:g}" for k, v in (state.params or {}).items())
        form = QFormLayout()
        form.addRow("Models", self.models)
        form.addRow("Thresholds", QLabel(params or "defaults"))
        form.addRow("Title", self.title)
        form.addRow("Folder", out_row)
        form.addRow("Failures shown per kind", self.gallery)
        form.addRow("", self.sweep)
        form.addRow("", self.reviews)
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.open_button = self.buttons.addButton("Open report", QDialogButtonBox.ButtonRole.ActionRole)
        self.open_button.setEnabled(False)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.set_job_buttons(self.export_button, self.close_button)
        self.open_button.clicked.connect(self.open_report)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.progress)
        lay.addWidget(self.status)
        lay.addWidget(self.buttons)

    def selected(self) -> list[str]:
        return [self.models.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.models.count())
                if self.models.item(i).checkState() == Qt.CheckState.Checked]

    def start(self) -> None:
        if self.job is not None:
            return
        names = self.selected()
        if not names:
            self.status.setText("choose at least one prediction set (open predictions or run a model)")
            return
        st = self.state
        kind, bench = st.kind, st.benchmark
        if kind is None or bench is None:
            self.status.setText("open a benchmark first (File › Open benchmark…)")
            return
        chosen = [(n, st.prediction_sets[n], st.scorers[n]) for n in names]
        params = dict(st.params)
        verdicts = []
        if self.reviews.isChecked() and st.review_store is not None:
            from masklens.core.review.locations import benchmark_key

            verdicts = st.review_store.current(benchmark_key(bench))
        opts = ReportOptions(title=self.title.text().strip() or None,
                             images_dir=st.images_dir,
                             gallery_per_kind=self.gallery.value(), sweep=self.sweep.isChecked(),
                             command="masklens gui › File › Export report")
        out = Path(self.out.text().strip())

        def work(ctx: JobContext) -> Path:  # rescoring (summaries, extras) runs off the GUI thread too
            runs = [ModelRun(n, ps, sc, sc.rescore(params), run_provenance(ps)) for n, ps, sc in chosen]
            return build_report(kind, bench, runs, out, params=params,
                                verdicts=verdicts, options=opts,
                                progress=lambda stage, d, n: ctx.progress(d, n, stage))

        self.run_job("report", work, self._done, "writing…")

    def _done(self, path: Path) -> None:
        self.job, self.written = None, Path(path)
        self.status.setText(f"wrote {path}/report.html (+ summary.csv, samples.csv, summary.json)")
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_button.setEnabled(True)
        self._idle()

    def open_report(self) -> bool:
        """Open report.html in the browser; when none starts, say where the report is (the path
        is selectable and copied to the clipboard)."""
        if self.written is None:
            return False
        page = self.written / "report.html"
        if QDesktopServices.openUrl(QUrl.fromLocalFile(str(page))):
            return True
        from PySide6.QtWidgets import QApplication

        QApplication.clipboard().setText(str(self.written))
        self.status.setText(f"no web browser could be started: the report is in {self.written} "
                            f"(open report.html there; the folder path was copied to the clipboard)")
        return False


def default_report_dir(benchmark: Any) -> Path:
    """Beside the benchmark's data, unless that is the bundled demo or not writable."""
    import os

    from masklens.core.review.locations import is_bundled

    src = next(iter(benchmark.sources.values()), None)
    folder = Path(src).parent if src else None
    if folder is None or is_bundled(folder) or not os.access(folder, os.W_OK):
        folder = Path.home() / "masklens-reports"
    return folder / f"{benchmark.kind}-{benchmark.name}-report"


def open_report_dialog(parent: QWidget | None, state: AppState) -> ReportDialog:
    """Show the export dialog for the window's benchmark and prediction sets (non-modal)."""
    if state.benchmark is None or state.kind is None:
        raise MasklensError("open a benchmark first (File › Open benchmark…)")
    if not state.scorers:
        raise MasklensError("no predictions to report on",
                            hint="File › Open predictions… or Evaluate › Run benchmark… first")
    dlg = ReportDialog(parent, state)
    dlg.show()
    return dlg
