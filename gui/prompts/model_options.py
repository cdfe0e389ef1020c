"""The prompt bar's "Options…" dialog: weights, device, score threshold and extra KEY=VALUE options
of the selected model, kept per model in the settings (what `masklens predict` takes as flags)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QWidget,
)

from masklens.core.errors import MasklensError

DEVICES = ["", "auto", "cpu", "cuda", "mps"]


def parse_options(weights: str, device: str, threshold: str, extra: str) -> dict[str, Any]:
    """Options for ``create_segmenter`` from the dialog's fields (empty fields are left out)."""
    out: dict[str, Any] = {}
    if weights.strip():
        out["weights"] = weights.strip()
    if device.strip():
        out["device"] = device.strip()
    if threshold.strip():
        try:
            out["score_threshold"] = float(threshold)
        except ValueError:
            raise MasklensError(f"score threshold must be a number, got '{threshold}'") from None
    for item in [p.strip() for p in extra.split(",") if p.strip()]:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise MasklensError(f"options must be KEY=VALUE, got '{item}'")
        try:
            out[key.strip()] = float(value) if value.strip().replace(".", "", 1).isdigit() else value.strip()
        except ValueError:
            out[key.strip()] = value.strip()
    return out


class ModelOptionsDialog(QDialog):
    def __init__(self, model: str, options: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Options of {model}")
        self.weights = QLineEdit(str(options.get("weights", "")))
        self.weights.setPlaceholderText("default checkpoint (a folder, a .pt file or a Hugging Face id)")
        self.device = QComboBox()
        self.device.addItems(DEVICES)
        self.device.setCurrentText(str(options.get("device", "")))
        self.threshold = QLineEdit("" if options.get("score_threshold") is None else str(options["score_threshold"]))
        self.threshold.setPlaceholderText("the model's calibrated default")
        known = {"weights", "device", "score_threshold"}
        self.extra = QLineEdit(", ".join(f"{k}={v}" for k, v in options.items() if k not in known))
        self.extra.setPlaceholderText("KEY=VALUE, … (e.g. mask_threshold=0.4)")
        self.error = QLabel("")
        self.error.setStyleSheet("color: #D55E00;")
        form = QFormLayout(self)
        form.addRow("Weights", self.weights)
        form.addRow("Device", self.device)
        form.addRow("Score threshold", self.threshold)
        form.addRow("Other options", self.extra)
        form.addRow(self.error)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self._accept)
        box.rejected.connect(self.reject)
        form.addRow(box)
        self.options: dict[str, Any] = dict(options)

    def _accept(self) -> None:
        try:
            self.options = parse_options(self.weights.text(), self.device.currentText(),
                                         self.threshold.text(), self.extra.text())
        except MasklensError as exc:
            self.error.setText(str(exc))
            return
        self.accept()
