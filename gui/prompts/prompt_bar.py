"""The prompt bar: role (and hypernym level), image, prompt text with history, model, Run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from masklens.core.errors import MasklensError
from masklens.core.models.registry import backend_info, backend_names
from masklens.core.schema import Role, Sample
from masklens.gui.widgets.combo_fit import keep_fitted

ROLES = [Role.POSITIVE, Role.NEGATIVE, Role.HYPERNYM, Role.MODAL, Role.AMODAL, Role.VOCABULARY]


@dataclass
class PromptRequest:
    text: str
    role: Role
    level: int | None
    image: str | None
    model: str
    replaces: str | None = None  # id of the benchmark prompt it stands in for (None: by text, or first)


def model_availability(*, elsewhere: bool = False) -> list[tuple[str, str, bool, bool]]:
    """(name, label, usable, weights missing) for every registered backend: not installed (greyed
    out), weights missing (selectable: running it says how to get them) or ready — as `masklens
    models` reports. ``elsewhere``: the torch models run in another Python environment (the
    Model environment), so one whose libraries are missing here is usable there."""
    try:
        from masklens.core.models.inventory import inventory

        entries = inventory()
    except Exception:  # noqa: BLE001 - fall back to the registry alone
        entries = None
    out = []
    if entries is not None:
        for e in entries:
            if not e.available and elsewhere and e.problem.startswith("not installed"):
                out.append((e.name, f"{e.title or e.name} — in the model environment", True, False))
            elif not e.available:  # the problem names the pip extra when one is missing
                why = e.problem if e.problem.startswith("not installed") else "not installed"
                out.append((e.name, f"{e.title or e.name} — {why}", False, False))
            elif e.needs_weights and not e.ready:
                out.append((e.name, f"{e.title or e.name} — weights missing", True, True))
            else:
                out.append((e.name, e.title or e.name, True, False))
        return out
    for name in backend_names():
        try:
            info = backend_info(name)
        except (MasklensError, ImportError) as exc:
            why = "not installed" if isinstance(exc, ImportError) else "unavailable"
            out.append((name, f"{name} ({why})", False, False))
            continue
        note = " — needs weights" if info.needs_weights else ""
        out.append((name, f"{info.title or name}{note}", True, False))
    return out


class PromptBar(QWidget):
    runRequested = Signal(object)  # PromptRequest
    cancelRequested = Signal()
    optionsRequested = Signal(str)  # model name

    def __init__(self, parent: QWidget | None = None, *, has_visual: Callable[[], bool] | None = None) -> None:
        """``has_visual()``: whether a drawn box/point prompt is waiting (it runs without text)."""
        super().__init__(parent)
        self.role = QComboBox()
        for r in ROLES:
            self.role.addItem(r.value, r)
        self.level = QSpinBox(minimum=1, maximum=9, prefix="level p")
        self.level.setToolTip("the hypernym level the typed prompt stands at (p1, p2, …)")
        self.image = QComboBox()
        self.image.setToolTip("the image of the sample the typed prompt runs on")
        self.target = QComboBox()
        self.target.setToolTip("the benchmark prompt the typed prompt stands in for")
        self.target.currentIndexChanged.connect(self._target_changed)
        self.text = QComboBox(editable=True)
        self.text.setMinimumWidth(150)
        field = self.text.lineEdit()
        assert field is not None  # an editable combo box has its line edit
        field.setPlaceholderText("type a prompt…")
        self.text.setToolTip("the prompt: a concept or phrase; Enter runs it")
        field.returnPressed.connect(self.request_run)
        self.model = QComboBox()
        for combo in (self.role, self.model, self.image, self.target):
            # a click picks an entry and leaves the focus where it was (the list's arrows keep
            # walking the samples instead of changing the role); Tab still reaches them
            combo.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        for combo, chars in ((self.text, 14), (self.model, 14), (self.image, 8), (self.role, 8)):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(chars)
        self.options = QPushButton("Options…")
        self.options.setToolTip("weights, device, score threshold of the selected model")
        self.options.clicked.connect(lambda: self.optionsRequested.emit(self.model.currentData() or ""))
        self.run = QPushButton("Run")
        self.run.setDefault(True)
        self.run.clicked.connect(self.request_run)
        self.cancel = QPushButton("Cancel")
        self.cancel.setEnabled(False)
        self.cancel.clicked.connect(self.cancelRequested)
        self.target.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.target.setMinimumContentsLength(16)  # its items can be long prompts: never widen the bar
        # the bar takes the width it is given: a box appearing (level, image, replaces) never
        # widens the window's centre and so never squeezes the docks beside it
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        # two fixed rows: what is asked (role, image, prompt, Run) above, how (model, the prompt it
        # replaces) below — boxes that appear take room in their row, never the window's width
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.setSpacing(2)
        ask, how = QHBoxLayout(), QHBoxLayout()
        # no "Prompt" label: the field says so itself ("type a prompt…"), and keeps that room
        for w in (QLabel("Role"), self.role, self.text, self.run, self.cancel):
            ask.addWidget(w, 1 if w is self.text else 0)
        # a hypernym's level and the image (HalluSegBench's factual / counterfactual) below: the
        # prompt field keeps its room
        for widget in (QLabel("Model"), self.model, self.options, self.level, self.image, self.target):
            how.addWidget(widget)
        how.addStretch(1)
        lay.addLayout(ask)
        lay.addLayout(how)
        self.role.currentIndexChanged.connect(self._role_changed)
        self.level.valueChanged.connect(lambda _: self._prefill())
        self.image.currentIndexChanged.connect(lambda _: self._prefill())
        self._sample: Sample | None = None
        self.history: list[str] = []
        self.has_visual: Callable[[], bool] = has_visual or (lambda: False)
        self.models_elsewhere = False  # torch models run in another environment (refresh_models)
        self.refresh_models()
        # as wide as the selected model's name ("Demo baseline (no weights)" read "Demo baseline (no we")
        keep_fitted(self.model, "every registered backend; greyed out: not installed")
        self._role_changed()

    # ------------------------------------------------------------ models
    def refresh_models(self, selected: str | None = None, *, elsewhere: bool | None = None) -> None:
        """List the backends again (``elsewhere``: whether torch models run in another
        environment; None: as last time)."""
        if elsewhere is not None:
            self.models_elsewhere = elsewhere
        current = selected or self.model.currentData()
        self.model.clear()
        items = self.model.model()
        assert isinstance(items, QStandardItemModel)  # a combo box's own model
        self.weights_missing: set[str] = set()  # backends whose default weights are not on this machine
        for name, label, usable, missing in model_availability(elsewhere=self.models_elsewhere):
            if missing:
                self.weights_missing.add(name)
            self.model.addItem(label, name)
            items.item(self.model.count() - 1).setEnabled(usable)
        idx = self.model.findData(current) if current else -1
        if idx < 0:
            idx = self.model.findData("demo")
        self.model.setCurrentIndex(max(idx, 0))

    def select_model(self, name: str) -> bool:
        idx = self.model.findData(name)
        if idx >= 0:
            self.model.setCurrentIndex(idx)
        return idx >= 0

    # ------------------------------------------------------------ sample
    def set_sample(self, sample: Sample | None) -> None:
        self._sample = sample
        self.image.blockSignals(True)
        self.image.clear()
        if sample is not None:
            for key in sample.images:
                self.image.addItem(f"on {key} image", key)
        self.image.setVisible(self.image.count() > 1)
        self.image.blockSignals(False)
        if sample is not None and sample.prompts:
            roles = [p.role for p in sample.prompts]
            if self.current_role() not in roles:
                self.set_role(roles[0])
        self._prefill()

    def current_role(self) -> Role:
        return self.role.currentData()

    def set_role(self, role: Role | str, level: int | None = None) -> None:
        self.role.setCurrentIndex(self.role.findData(Role(role)))
        if level is not None:
            self.level.setValue(level)

    def _role_changed(self, *_: object) -> None:
        self.level.setVisible(self.current_role() == Role.HYPERNYM)
        self._prefill()

    def _prefill(self) -> None:
        """Offer the sample's prompts of the chosen role first, then the history."""
        role = self.current_role()
        level = self.level.value() if role == Role.HYPERNYM else None
        image = self.image.currentData()
        ours: list[str] = []
        self.target.blockSignals(True)
        self.target.clear()
        if self._sample is not None:
            for p in self._sample.prompts:
                if p.role == role and (level is None or p.level == level) and (
                    image is None or p.image == image or len(self._sample.images) < 2
                ):
                    ours.append(p.text)
                    short = p.text if len(p.text) <= 40 else p.text[:39] + "…"
                    self.target.addItem(f"replaces {p.id}: “{short}”", p.id)
        self.target.setVisible(self.target.count() > 1)  # several prompts of one role: pick one
        self.target.blockSignals(False)
        items = list(dict.fromkeys(ours + self.history))
        self.text.blockSignals(True)
        self.text.clear()
        self.text.addItems(items)
        self.text.setCurrentIndex(0 if ours else -1)
        if not ours:
            self.text.setEditText("")
        self.text.blockSignals(False)

    def _target_changed(self, i: int) -> None:
        if i >= 0 and self._sample is not None:
            pid = self.target.itemData(i)
            text = next((p.text for p in self._sample.prompts if p.id == pid), None)
            if text is not None:
                self.text.setEditText(text)

    def set_target(self, prompt_id: str) -> bool:
        idx = self.target.findData(prompt_id)
        if idx >= 0:
            self.target.setCurrentIndex(idx)
        return idx >= 0

    def set_text(self, text: str) -> None:
        self.text.setEditText(text)

    def request(self) -> PromptRequest | None:
        text = self.text.currentText().strip()
        if not text and not self.has_visual():
            return None
        role = self.current_role()
        return PromptRequest(
            text=text,
            role=role,
            level=self.level.value() if role == Role.HYPERNYM else None,
            image=self.image.currentData() if self.image.count() > 1 else None,
            model=self.model.currentData() or "demo",
            replaces=self.target.currentData() if self.target.count() > 1 else None,
        )

    def request_run(self) -> None:
        req = self.request()
        if req is not None:
            if req.text:
                self.history = [req.text] + [t for t in self.history if t != req.text][:49]
            self.runRequested.emit(req)

    def set_busy(self, busy: bool) -> None:
        self.run.setEnabled(not busy)
        self.cancel.setEnabled(busy)
