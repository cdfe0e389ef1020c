"""Draws a view's panels: image, ground truth, predicted instances with scores, or the TP/FP/FN
error view, with synchronised pan/zoom across the panels."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from masklens.core.schema import Prediction, Sample
from masklens.gui.canvas import Panel, SyncGroup
from masklens.gui.images import ImageStore
from masklens.gui.overlays import (
    INSTANCE_PALETTE,
    error_labels,
    error_table,
    instance_labels,
    instance_table,
    layer_labels,
    layer_table,
    rgb_image,
    to_pixmap,
)
from masklens.gui.settings import DEFAULT_COLOURS
from masklens.gui.views import PanelSpec


@dataclass
class LayerToggles:
    gt: bool = True
    pred: bool = True
    error: bool = False
    outlines: bool = True
    scores: bool = True
    gt_opacity: float = 0.45
    pred_opacity: float = 0.55
    colours: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_COLOURS))


@dataclass
class RenderContext:
    store: ImageStore
    sample: Sample
    prediction: Callable[[str | None], Prediction | None]
    score_threshold: float
    toggles: LayerToggles
    caption: Callable[[PanelSpec], str] = lambda spec: ""
    score_labels: bool = True


def render_panel(panel: Panel, spec: PanelSpec, ctx: RenderContext) -> None:
    """Fill one panel's canvas with the image and its overlay layers."""
    tg, colours = ctx.toggles, ctx.toggles.colours
    ref = ctx.sample.images.get(spec.image)
    canvas = panel.canvas
    panel.title.setText(spec.title)
    panel.title.setToolTip(spec.title)
    panel.caption.setText(ctx.caption(spec))
    if ref is None:
        canvas.clear_layers()
        canvas.set_labels([])
        return
    rgb = ctx.store.image(ref)
    h, w = rgb.shape[:2]
    canvas.set_image(rgb_image(rgb))
    gts = [ctx.store.mask(ctx.sample.gts[k].union(), h, w) for k in spec.gts if k in ctx.sample.gts]
    pred = ctx.prediction(spec.prompt_id)
    accepted = [i for i in (pred.instances if pred else []) if i.score >= ctx.score_threshold]
    inst = [ctx.store.mask(i.mask, h, w) for i in accepted]
    canvas.clear_layers()
    if tg.error and gts:
        union = np.logical_or.reduce(inst) if inst else np.zeros((h, w), bool)
        table = error_table(colours["tp"], colours["fp"], colours["fn"], max(tg.pred_opacity, 0.5))
        canvas.set_layer("error", to_pixmap(error_labels(gts[0], union), table), z=3)
    else:
        if tg.gt:
            for i, m in enumerate(gts):
                if i == 0:  # fill below the prediction, outline above it
                    labels0 = layer_labels(m, tg.outlines)
                    canvas.set_layer("gt", to_pixmap(labels0, layer_table(colours["gt"], tg.gt_opacity, 0.0)), z=1)
                    if tg.outlines:
                        canvas.set_layer("gt-outline", to_pixmap(labels0, layer_table(colours["gt"], 0.0)), z=8)
                else:  # further ground truths (e.g. R2SM's other mask): outline only
                    table = layer_table(colours["gt2"], 0.0)
                    canvas.set_layer(f"gt{i + 1}", to_pixmap(layer_labels(m, True, 3), table), z=8 + i)
        if tg.pred and inst:
            canvas.set_layer("pred", to_pixmap(instance_labels(inst, tg.outlines),
                                               instance_table(tg.pred_opacity)), z=5)
    labels = []
    if tg.scores and tg.pred and ctx.score_labels:
        for k, i in enumerate(accepted):
            if i.mask.area == 0:
                continue
            x, y, _bw, _bh = i.mask.bbox
            sx, sy = w / i.mask.width, h / i.mask.height
            labels.append((x * sx, y * sy, f"{i.score:.2f}", INSTANCE_PALETTE[k % len(INSTANCE_PALETTE)]))
    canvas.set_labels(labels)


class SampleViewWidget(QWidget):
    """A grid of panels; the panels' canvases pan and zoom together."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(3)
        self.panels: list[Panel] = []
        self.specs: list[PanelSpec] = []
        self.sync = SyncGroup()
        self.empty = QLabel("Open a benchmark (File › Open benchmark…) or drop a file here.")
        self.empty.setStyleSheet("color: gray; font-size: 14px;")
        self.grid.addWidget(self.empty, 0, 0)

    def _ensure(self, n: int, columns: int) -> None:
        layout_key = (n, columns)
        if getattr(self, "_layout_key", None) == layout_key:
            return
        for p in self.panels:
            self.grid.removeWidget(p)
            p.deleteLater()
        self.panels, self.sync = [], SyncGroup()
        self.empty.setVisible(n == 0)
        for c in range(8):
            self.grid.setColumnStretch(c, 1 if c < columns else 0)
            self.grid.setRowStretch(c, 1 if c < (n + columns - 1) // max(columns, 1) else 0)
        for i in range(n):
            p = Panel()
            self.grid.addWidget(p, i // columns, i % columns)
            self.sync.add(p.canvas)
            self.panels.append(p)
        self._layout_key = layout_key

    def show_panels(self, specs: list[PanelSpec], ctx: RenderContext | None, columns: int) -> None:
        self._ensure(len(specs) if ctx else 0, columns)
        self.specs = list(specs) if ctx else []
        if ctx is None:
            return
        for panel, spec in zip(self.panels, specs, strict=True):
            render_panel(panel, spec, ctx)

    def fit(self) -> None:
        if self.panels:
            self.panels[0].canvas.fit()

    def one_to_one(self) -> None:
        if self.panels:
            self.panels[0].canvas.one_to_one()
