"""Benchmark edits verified at a glance, for samples with a factual and a counterfactual image
(HalluSegBench): the edit leakage measured for every sample when the benchmark opens (a
browser column and a card line, :mod:`masklens.core.kinds.hallusegbench.leakage`), and the
"Edit difference" view: on both images' panels, the changed pixels inside the edited object
(M_c ∪ M′_c′, bluish green) and outside it (the leakage, vermillion).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import QGraphicsPixmapItem

from masklens.core.errors import MasklensError
from masklens.core.schema import Sample
from masklens.gui.canvas.overlays import to_pixmap
from masklens.gui.window.context import WindowPart

if TYPE_CHECKING:
    from masklens.gui.canvas.image_cache import ImageStore
    from masklens.gui.canvas.sample_view import SampleViewWidget
    from masklens.gui.state import AppState
    from masklens.gui.widgets.quiet_tabs import QuietTabWidget
    from masklens.gui.window.commands import WindowCommands
    from masklens.gui.window.slots import WindowSlots
    from masklens.gui.window.view_toolbar import ViewToolbar

log = logging.getLogger(__name__)
PAIR = ("factual", "counterfactual")
INSIDE, OUTSIDE = "#009E73", "#D55E00"


def _argb(colour: str, alpha: float) -> int:
    c = QColor(colour)
    c.setAlphaF(alpha)
    return c.rgba()


def has_pair(sample: Sample | None) -> bool:
    return sample is not None and all(k in sample.images and k in sample.gts for k in PAIR)


def measure(ctx: Any, samples: list[Sample]) -> dict[str, dict[str, Any] | None]:
    """Edit leakage of every sample with both images on disk (worker job)."""
    from masklens.core.files.images import read_image
    from masklens.core.kinds.hallusegbench.leakage import sample_leakage

    out: dict[str, dict[str, Any] | None] = {}
    for i, s in enumerate(samples):
        if i % 16 == 0:
            ctx.progress(i, len(samples), "edit leakage")
            ctx.check()

        def image(key: str, s: Sample = s) -> np.ndarray | None:
            ref = s.images[key]
            try:
                return read_image(ref.path) if ref.path is not None else None
            except (MasklensError, OSError) as exc:  # shown as a checkerboard; no figure
                log.info("edit leakage of %s: %s", s.id, exc)
                return None

        out[s.id] = sample_leakage(s, image) if has_pair(s) else None
    ctx.progress(len(samples), len(samples), "edit leakage")
    return out


def difference_labels(factual: np.ndarray, counterfactual: np.ndarray, edited: np.ndarray) -> np.ndarray:
    """1 = changed inside the edited region, 2 = changed outside it (leakage; 3 on the leakage's
    outline, so that it reads apart from the image's own colours), 0 = unchanged."""
    from masklens.core.kinds.hallusegbench.leakage import changed_pixels
    from masklens.gui.canvas.overlays import outline

    changed = changed_pixels(factual, counterfactual)
    leak = changed & ~edited
    labels = (changed & edited).view(np.uint8) | (leak.view(np.uint8) << 1)
    labels[outline(leak, 1)] = 3
    return labels


class EditCheckContext(WindowPart, Protocol):
    """What the edit check uses of the window: the state, the Sample tab's canvas and the image
    store (the overlay), the central tabs (its key), the view toolbar (its toggles) and slot
    ``toolbar.view`` (its switch), the commands (the measuring job) and ``set_params`` (readouts
    derived again with the figures)."""

    state: AppState
    sample_view: SampleViewWidget
    store: ImageStore
    tabs: QuietTabWidget
    view_toolbar: ViewToolbar
    slots: WindowSlots
    commands: WindowCommands

    def set_params(self, params: dict[str, float]) -> None: ...


class EditCheck(QObject):
    """Measures the edit leakage when a benchmark with image pairs opens; the Edit difference view."""

    def __init__(self, window: EditCheckContext) -> None:
        super().__init__(window.window())
        self.window = window
        self.items: list[QGraphicsPixmapItem] = []
        self.labels: np.ndarray | None = None  # the difference shown (for tests and screenshots)
        self.measured: dict[str, dict[str, Any] | None] = {}
        self.action = QAction("Edit difference", window.window(), checkable=True)
        self.action.setShortcut("Shift+E")
        self.action.setToolTip("HalluSegBench pairs: pixels changed between I and I′ inside the edited object "
                               "(green) and outside it, the edit leakage (vermillion) (Shift+E)")
        self.action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        window.tabs.addAction(self.action)
        window.slots.add("toolbar.view", self.action)
        self.action.toggled.connect(lambda _: self.show_difference())
        window.state.benchmarkChanged.connect(self._benchmark_changed)
        window.state.sampleChanged.connect(lambda _: self.show_difference())
        window.view_toolbar.togglesChanged.connect(self.show_difference)

    def _benchmark_changed(self) -> None:
        bench = self.window.state.benchmark
        self.measured = {}
        self.action.setEnabled(bench is not None and any(has_pair(s) for s in bench.samples[:1]))
        if bench is None or not self.action.isEnabled():
            self.show_difference()
            return

        def done(figures: dict[str, dict[str, Any] | None]) -> None:
            from masklens.core.kinds.hallusegbench.leakage import annotate

            if self.window.state.benchmark is not bench:
                return
            self.measured = figures
            if annotate(bench.samples, figures) and self.window.state.kind is not None:
                self.window.set_params(dict(self.window.state.params))  # readouts carry the figures

        self.window.commands.start("edit leakage", measure, list(bench.samples), on_done=done)
        self.show_difference()

    def show_difference(self) -> None:
        """Draw (or remove) the difference overlay on the panels of the current sample's pair."""
        for item in self.items:
            if item.scene() is not None:
                item.scene().removeItem(item)
        self.items = []
        w, sample = self.window, self.window.state.sample
        if not self.action.isChecked() or not self.action.isEnabled() or sample is None or not has_pair(sample):
            return
        store = w.store
        f, cf = (store.image(sample.images[k]) for k in PAIR)
        h, wd = f.shape[:2]
        edited = store.mask(sample.gts["factual"].union(), h, wd) | store.mask(sample.gts["counterfactual"].union(), h, wd)
        self.labels = difference_labels(f, cf, edited)
        table = [0, _argb(INSIDE, 0.55), _argb(OUTSIDE, 0.5), _argb(OUTSIDE, 1.0)] + [0] * 252
        pixmap = to_pixmap(self.labels, table)
        for panel, spec in zip(w.sample_view.panels, w.sample_view.specs, strict=False):
            if spec.image in PAIR:
                item = QGraphicsPixmapItem(pixmap)
                sw, sh = panel.canvas.image_size()
                item.setScale(sw / wd if wd else 1.0)
                item.setZValue(40)
                panel.canvas.scene().addItem(item)
                self.items.append(item)
