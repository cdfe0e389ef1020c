"""Shared plumbing of the dialogs that run one background job (Evaluate › Run benchmark…, File ›
Export report…): a progress bar and status line fed by a :class:`JobRunner`, an action button that
is disabled while the job runs, a Close button that reads Cancel meanwhile, and a folder field with a
browse button."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QWidget,
)

from masklens.gui.jobs.workers import Job, JobContext, JobRunner
from masklens.gui.state import AppState


class JobDialog(QDialog):
    """Subclasses build their form, call :meth:`set_job_buttons` with their action and close
    buttons, start work with :meth:`run_job` and finish their ``on_done`` with :meth:`_idle`."""

    #: status line after a cancel
    cancelled_text = "cancelled"

    def __init__(self, parent: QWidget | None, state: AppState, title: str, min_width: int) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(min_width)
        self.state = state
        self.runner = JobRunner(self)
        self.runner.progressed.connect(self._progress)
        self.runner.cancelled.connect(self._cancelled)
        self.job: Job | None = None
        self.progress = QProgressBar()
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.buttons = QDialogButtonBox()
        self._action_button: QPushButton | None = None
        self._close_button: QPushButton | None = None

    def set_job_buttons(self, action: QPushButton, close: QPushButton) -> None:
        """``action`` starts the job (:meth:`start`), ``close`` cancels it or closes the dialog."""
        self._action_button, self._close_button = action, close
        action.clicked.connect(self.start)
        close.clicked.connect(self.cancel_or_close)

    def folder_row(self, line: QLineEdit, caption: str) -> QHBoxLayout:
        """``line`` with a browse button that fills it with a folder chosen under ``caption``."""

        def browse() -> None:
            d = QFileDialog.getExistingDirectory(self, caption)
            if d:
                line.setText(d)

        button = QPushButton("…")
        button.clicked.connect(browse)
        row = QHBoxLayout()
        row.addWidget(line)
        row.addWidget(button)
        return row

    def start(self) -> None:
        raise NotImplementedError

    def run_job(self, name: str, work: Callable[[JobContext], Any], on_done: Callable[[Any], None],
                status: str) -> None:
        """Run ``work`` off the GUI thread; the buttons switch to their running state."""
        assert self._action_button is not None and self._close_button is not None
        self._action_button.setEnabled(False)
        self._close_button.setText("Cancel")
        self.status.setText(status)
        self.job = self.runner.run(name, work, on_done=on_done, on_error=self._failed)

    def progress_text(self, text: str, done: int, total: int) -> str:
        """The status line for a progress report (default: the job's own text)."""
        return text

    def _progress(self, _name: str, done: int, total: int, text: str) -> None:
        self.progress.setMaximum(max(total, 1))
        self.progress.setValue(done)
        self.status.setText(self.progress_text(text, done, total))

    def _failed(self, message: str) -> None:
        self.job = None
        self.status.setText(f"failed: {message}")
        self._idle()

    def _cancelled(self, _name: str) -> None:
        self.job = None
        self.status.setText(self.cancelled_text)
        self._idle()

    def _idle(self) -> None:
        assert self._action_button is not None and self._close_button is not None
        self._action_button.setEnabled(True)
        self._close_button.setText("Close")

    def cancel_or_close(self) -> None:
        if self.job is not None:
            self.runner.cancel_all()
        else:
            self.reject()
