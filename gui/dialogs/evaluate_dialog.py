"""Evaluate › Run benchmark…: run one or more models over the open benchmark (or a subset),
with progress and cancel; finished prompts come from the prediction cache, so a cancelled
run resumes. The scored runs are attached to the window as prediction sets."""

from __future__ import annotations

from typing import Any, cast

from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from masklens.core.errors import MasklensError
from masklens.core.inference.evaluate import EvaluateResult, ModelSpec, evaluate, subset
from masklens.core.models.registry import backend_info, backend_names
from masklens.core.runtime.extras import install_command, missing_for
from masklens.core.schema import Benchmark
from masklens.core.scoring.contract import BenchmarkKind
from masklens.gui.dialogs.job_dialog import JobDialog
from masklens.gui.jobs.workers import JobContext
from masklens.gui.state import AppState


class _ModelRow(QWidget):
    def __init__(self, names: list[str], current: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = QComboBox()
        for n in names:
            try:
                info = backend_info(n)
            except Exception:  # noqa: BLE001 - a backend that cannot even describe itself
                continue
            absent = missing_for(info.extra) if info.extra else None
            note = f" (not installed: {install_command(info.extra)})" if absent and info.extra else ""
            self.model.addItem(f"{n} — {info.title}{note}", n)
            items = cast(QStandardItemModel, self.model.model())  # a QComboBox's own model
            items.item(self.model.count() - 1).setEnabled(absent is None)
        i = self.model.findData(current)
        self.model.setCurrentIndex(max(i, 0))
        self.weights = QLineEdit()
        self.weights.setPlaceholderText("weights: default (path or Hugging Face id)")
        self.remove = QPushButton("✕")
        self.remove.setFixedWidth(28)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.model, 2)
        lay.addWidget(self.weights, 3)
        lay.addWidget(self.remove)

    def spec(self) -> ModelSpec:
        return ModelSpec(self.model.currentData(), self.weights.text().strip() or None)


class EvaluateDialog(JobDialog):
    cancelled_text = "cancelled — finished prompts are cached; Run again to resume"

    def __init__(self, parent: QWidget | None, state: AppState) -> None:
        kind, benchmark = opened_benchmark(state)
        super().__init__(parent, state, "Run benchmark", 620)
        self.evaluation: EvaluateResult | None = None  # the last run's, once it is done
        names = backend_names()
        self.rows: list[_ModelRow] = []
        self.rows_box = QVBoxLayout()
        add = QPushButton("Add model")
        add.clicked.connect(lambda: self.add_model(state.model))
        self.scope = QComboBox()
        self.scope.addItem("all samples", "all")
        groups = sorted({s.group for s in benchmark.samples if s.group is not None})
        for g in groups:
            self.scope.addItem(f"group {g}", f"group:{g}")
        self.scope.addItem("these sample ids…", "ids")
        self.ids = QLineEdit()
        self.ids.setPlaceholderText("id,id,… (for 'these sample ids')")
        self.out = QLineEdit()
        self.out.setPlaceholderText("optional: folder for predictions and scores")
        out_row = self.folder_row(self.out, "Folder for predictions and scores")
        form = QFormLayout()
        form.addRow("Benchmark", QLabel(f"{kind.title or kind.name}: "
                                        f"{benchmark.name} ({len(benchmark)} samples)"))
        form.addRow("Samples", self.scope)
        form.addRow("", self.ids)
        form.addRow("Output", out_row)
        self.progress.setFormat("%v / %m prompts")
        self.run_button = self.buttons.addButton("Run", QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.set_job_buttons(self.run_button, self.cancel_button)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("Models (several rows compare models or checkpoints)"))
        lay.addLayout(self.rows_box)
        lay.addWidget(add)
        lay.addLayout(form)
        lay.addWidget(self.progress)
        lay.addWidget(self.status)
        lay.addWidget(self.buttons)
        self._names = names
        self.add_model(state.model or "demo")

    def add_model(self, name: str) -> _ModelRow:
        row = _ModelRow(self._names, name)
        row.remove.clicked.connect(lambda: self._remove(row))
        self.rows.append(row)
        self.rows_box.addWidget(row)
        return row

    def _remove(self, row: _ModelRow) -> None:
        if len(self.rows) > 1:
            self.rows.remove(row)
            row.deleteLater()

    # ------------------------------------------------------------ running
    def start(self) -> None:
        if self.job is not None:
            return
        try:
            kind, bench = opened_benchmark(self.state)[0], self._subset()
        except Exception as exc:  # noqa: BLE001 - e.g. unknown sample ids: shown in the dialog
            self.status.setText(str(exc))
            return
        specs = [r.spec() for r in self.rows]
        out = self.out.text().strip() or None
        images = self.state.images_dir
        params = dict(self.state.params)

        def work(ctx: JobContext) -> EvaluateResult:
            from masklens.core.cache.predictions import PredictionCache

            cache = PredictionCache()
            try:
                return evaluate(kind, bench, specs, out, params=params, cache=cache,
                                images_dir=images,
                                progress=lambda label, d, n: ctx.progress(d, n, label),
                                cancel=lambda: ctx.cancelled)
            finally:
                cache.close()

        self.run_job("evaluate", work, self._done, "running…")

    def _subset(self) -> Benchmark:
        benchmark = opened_benchmark(self.state)[1]
        scope = self.scope.currentData()
        if scope == "all":
            return benchmark
        if scope == "ids":
            ids = [x.strip() for x in self.ids.text().split(",") if x.strip()]
            return subset(benchmark, samples=ids)
        return subset(benchmark, groups=[scope.split(":", 1)[1]])

    def progress_text(self, text: str, done: int, total: int) -> str:
        return f"{text}: {done} / {total}"

    def _done(self, result: EvaluateResult) -> None:
        self.evaluation = result
        self.job = None
        kind, benchmark = opened_benchmark(self.state)
        full = len(next(iter(result.runs)).result.samples) == len(benchmark) \
            if result.runs else False
        for run in result.runs:
            if full:
                self.state.add_predictions(run.name, run.predictions, run.scorer)
        lines = [f"{label}: {st['prompts']} prompts, {st['cached']} from the cache, "
                 f"{st['computed']} computed" for label, st in result.stats.items()]
        if not full:
            lines.append("(a subset: scores shown here, not attached to the browser)")
        g = kind.groups[0] if kind.groups else None
        for run in result.runs:
            head = run.result.summary.get(g, {}) if g else {}
            lines.append(f"{run.name} [{g}]: {summary_line(head)}")
        self.status.setText("\n".join(lines))
        self._idle()


def summary_line(row: dict[str, Any], limit: int = 5) -> str:
    """The first numbers of a summary row, e.g. "N=18, TA_TP=7, …" (counts as counts, rates to
    three decimals; confidence intervals left out); "no numbers" when it has none."""
    parts = []
    for k, v in row.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or k.endswith("_ci95"):
            continue
        parts.append(f"{k}={v}" if isinstance(v, int) else f"{k}={v:.3f}")
        if len(parts) == limit:
            break
    return ", ".join(parts) or "no numbers"


def opened_benchmark(state: AppState) -> tuple[BenchmarkKind, Benchmark]:
    """The window's open benchmark and its kind; :class:`MasklensError` when none is open."""
    if state.benchmark is None or state.kind is None:
        raise MasklensError("open a benchmark first (File › Open benchmark…)")
    return state.kind, state.benchmark


def open_evaluate_dialog(parent: QWidget | None, state: AppState) -> EvaluateDialog | None:
    """Show the dialog for the window's open benchmark (non-modal; returns it)."""
    opened_benchmark(state)  # raises before a dialog is made
    dlg = EvaluateDialog(parent, state)
    dlg.show()
    return dlg


