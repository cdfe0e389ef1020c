"""The status bar: current sample, job progress with Cancel, device and memory (RAM, GPU)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QStatusBar, QWidget

from masklens.gui.widgets.elided_label import ElidedLabel


def device_text(rss: int | None = None, host: Any = None) -> str:
    """The device and the memory held: "cpu · RAM 4.6 GB" (resident size, read from the OS), on
    CUDA also the GPU memory allocated/reserved by torch — without importing torch ourselves.
    With the torch models in their own process (``host``, a running ModelHost), the device is that
    process' (as it last reported it) and RAM is "window + models". ``rss`` overrides this
    process' reading (tests)."""
    from masklens.core.runtime.memory import human_bytes, rss_bytes

    rss = rss_bytes() if rss is None else rss
    ram = f" · RAM {human_bytes(rss)}" if rss is not None else ""
    pid = host.pid if host is not None else None
    if pid is None:
        from masklens.core.models.model_process import device_state

        state = device_state()  # this process' own torch, if a model runs here
    else:
        model_rss = rss_bytes(pid)
        if rss is not None and model_rss is not None:
            ram = f" · RAM {human_bytes(rss)} window + {human_bytes(model_rss)} models"
        state = host.state or {"torch": True}
    if not state.get("torch"):
        return f"device: cpu (no torch model loaded){ram}"
    if "cuda" in state:
        mib = 2**20
        return (f"device: cuda:{state['cuda']} {state['name']} · GPU mem {state['allocated'] / mib:.0f}/"
                f"{state['total'] / mib:.0f} MiB (reserved {state['reserved'] / mib:.0f}){ram}")
    if state.get("mps"):
        return f"device: mps{ram}"
    return f"device: cpu{ram}"


def in_gui_words(message: str) -> str:
    """A core message with its CLI flags named as the window's controls (weights → Options…)."""
    return (message.replace("pass --weights PATH_OR_HF_ID", "choose the weights with Options… beside the model box")
            .replace("pass a local folder with --weights", "choose a local folder with Options… beside the model box"))


def weights_missing_message(model: str) -> str:
    """What to do in the window when a backend's weights are known to be absent: the hub id and how
    to fetch it (`hf download`, `hf auth login` for a gated model) or the Options… dialog."""
    from masklens.core.models.registry import backend_info
    from masklens.core.models.weights import _fetch_hint

    hub_id = backend_info(model).default_weights
    if not hub_id:
        return (f"{model}: its weights are not on this machine — choose them with the prompt bar's "
                "Options… dialog (a folder, a .pt file, or a Hugging Face id, fetched when online)")
    return (f"{model}: the weights '{hub_id}' are not in the Hugging Face cache — "
            f"{_fetch_hint(hub_id, window=True)}")


class StatusBar(QStatusBar):
    def __init__(self, parent: QWidget | None = None, *, model_host: Any = None) -> None:
        super().__init__(parent)
        self.sample = ElidedLabel("", opaque=True)  # a long sample id never widens the window
        self.progress = QProgressBar()
        self.progress.setFixedWidth(220)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.cancel = QPushButton("Cancel")
        self.cancel.hide()
        self.model_host = model_host  # the window's ModelHost, for the model process' device and RAM
        self.device = QLabel(device_text())
        self.addWidget(self.sample, 1)
        self.addPermanentWidget(self.progress)
        self.addPermanentWidget(self.cancel)
        self.addPermanentWidget(self.device)
        self._timer = QTimer(self, interval=2000)
        self._timer.timeout.connect(self.update_device)
        self._timer.start()

    def set_sample(self, text: str) -> None:
        self.sample.setText(text)

    def show_progress(self, name: str, done: int, total: int, text: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{name}: {text} %v/%m" if total > 1 else f"{name}: {text}")

    def set_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel.setVisible(busy)
        if not busy:
            self.progress.reset()

    def follow_jobs(self, jobs: Any, prompt_bar: Any, message_bar: Any) -> None:
        """Show the worker pool's progress here (with Cancel), keep the prompt bar's Run/Cancel in
        step, and say a job's failure or cancellation in the message bar, in the window's words."""
        def busy_changed() -> None:
            self.set_busy(jobs.busy)
            prompt_bar.set_busy(jobs.busy)
            self.update_device()

        jobs.started.connect(lambda n: busy_changed())
        jobs.finished.connect(lambda n: busy_changed())
        jobs.progressed.connect(self.show_progress)
        jobs.failed.connect(lambda n, msg: message_bar.show_message(f"{n}: {in_gui_words(msg)}", "error"))
        jobs.cancelled.connect(lambda n: message_bar.show_message(f"{n}: cancelled", "info"))
        self.cancel.clicked.connect(jobs.cancel_all)

    def update_device(self) -> None:
        self.device.setText(device_text(host=self.model_host))
