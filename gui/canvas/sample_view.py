"""Draws a view's panels: image, ground truth, predicted instances with scores, or the TP/FP/FN
error view, with synchronised pan/zoom across the panels."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal, SignalInstance
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from masklens.core.schema import Prediction, Sample
from masklens.gui.canvas.image_cache import ImageStore
from masklens.gui.canvas.image_canvas import Canvas, Panel, SyncGroup
from masklens.gui.canvas.overlays import (
    INSTANCE_PALETTE,
    bbox,
    crop,
    error_labels,
    error_table,
    instance_labels,
    instance_table,
    layer_labels,
    layer_table,
    rgb_image,
    to_pixmap,
)
from masklens.gui.canvas.panel_plan import (
    drawn_masks,
    ground_truth_labels,
    ground_truth_table,
    panel_instances,
    panel_is_cold,
)
from masklens.gui.canvas.prepared import Prepared, PreparedLayers
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
    pixmaps: dict = field(default_factory=dict)  # image QPixmaps of this render, shared by panels
    masks_of: dict = field(default_factory=dict)  # each panel's masks in this render (panel_plan)
    score_labels: bool = True


def render_panel(panel: Panel, spec: PanelSpec, ctx: RenderContext, *, layers: bool = True) -> None:
    """Fill one panel's canvas with the image and its overlay layers (``layers=False``: the image
    alone, its layers cleared; they follow in a later event-loop turn)."""
    tg = ctx.toggles
    ref = ctx.sample.images.get(spec.image)
    canvas = panel.canvas
    panel.title.setText(spec.title)
    panel.title.setToolTip(spec.title)
    panel.caption.setText(ctx.caption(spec))
    if ref is None:
        canvas.keep_layers([])
        canvas.set_labels([])
        return
    rgb = ctx.store.image(ref)
    h, w = rgb.shape[:2]
    key = (spec.image, id(rgb))
    if key not in ctx.pixmaps:  # one conversion per image, shared by the panels showing it
        ctx.pixmaps[key] = image_pixmap(rgb)
    canvas.set_image(ctx.pixmaps[key])
    canvas.set_image_opacity(0.35 if tg.error else 1.0)
    if not layers:
        canvas.keep_layers([])
        canvas.set_labels([])
        return
    gt_masks, accepted = drawn_masks(spec, ctx)
    gts = [ctx.store.mask(m, h, w) for m in gt_masks]
    inst = [ctx.store.mask(i.mask, h, w) for i in accepted]
    canvas.keep_layers(build_layers(canvas, gts, inst, tg, ctx.store.box, ctx.store.prepared))
    labels = []
    if tg.scores and tg.pred and ctx.score_labels:
        for k, i in enumerate(accepted):
            if i.mask.area == 0:
                continue
            x, y, _bw, _bh = i.mask.bbox
            sx, sy = w / i.mask.width, h / i.mask.height
            labels.append((x * sx, y * sy, f"{i.score:.2f}", INSTANCE_PALETTE[k % len(INSTANCE_PALETTE)]))
    canvas.set_labels(labels)


#: the images last drawn, as pixmaps: (array, its pixmap) by the array's id (the array is held, so
#: the id is not reused); entries of a set share images, and users step back and forth
_PIXMAPS: OrderedDict[int, tuple[np.ndarray, QPixmap]] = OrderedDict()
PIXMAP_CACHE = 6
#: images converted by the prefetcher for the next switch (the neighbours' images: 2–4)
_READY_IMAGES: OrderedDict[int, tuple[np.ndarray, QImage]] = OrderedDict()
_READY_LOCK = threading.Lock()
READY_IMAGES = 4


#: instances drawn per event-loop turn when a new result is drawn in turns (a 100-mask panel of an
#: 1800×1200 image took ~25 ms on a loaded 2-core machine)
TURN_INSTANCES = 100
#: the next part waits on a timer of this many ms, not a zero one: a zero timer is a posted event,
#: delivered in the same pass of the event loop (no timer, paint or input in between)
TURN_GAP_MS = 1


def prepare_image(rgb: np.ndarray) -> None:
    """Off the GUI thread (the image prefetcher): ``rgb`` as an image in the pixmaps' own format,
    so that :func:`image_pixmap` converts nothing on the GUI thread (3–7 ms at 1280×720 there)."""
    image = rgb_image(rgb).convertToFormat(QImage.Format.Format_RGB32)
    with _READY_LOCK:
        _READY_IMAGES[id(rgb)] = (rgb, image)
        while len(_READY_IMAGES) > READY_IMAGES:
            _READY_IMAGES.popitem(last=False)


def image_pixmap(rgb: np.ndarray) -> QPixmap:
    """The pixmap of a decoded image (converted once while it is among the last few drawn)."""
    hit = _PIXMAPS.get(id(rgb))
    if hit is not None and hit[0] is rgb:
        _PIXMAPS.move_to_end(id(rgb))
        return hit[1]
    with _READY_LOCK:
        ready = _READY_IMAGES.pop(id(rgb), None)
    pixmap = QPixmap.fromImage(ready[1] if ready is not None and ready[0] is rgb else rgb_image(rgb))
    _PIXMAPS[id(rgb)] = (rgb, pixmap)
    while len(_PIXMAPS) > PIXMAP_CACHE:
        _PIXMAPS.popitem(last=False)
    return pixmap


def union_box(boxes: list[tuple[int, int, int, int] | None]) -> tuple[int, int, int, int] | None:
    real = [b for b in boxes if b is not None]
    if not real:
        return None
    return (min(b[0] for b in real), min(b[1] for b in real), max(b[2] for b in real), max(b[3] for b in real))


def build_layers(canvas: Canvas, gts: list[np.ndarray], inst: list[np.ndarray], tg: LayerToggles,
                 box_of: Callable[[np.ndarray], tuple[int, int, int, int] | None] = bbox,
                 prepared: PreparedLayers | None = None) -> list[str]:
    """Overlay pixmaps for ground truths (``gts[0]`` filled and outlined, others outlined) above
    the instances, or the TP/FP/FN error view; each covers only its masks' bounding box
    (``box_of`` gives a mask's box, e.g. memoised; ``prepared`` holds label maps and images a
    prompt job made off the GUI thread for a new result). Returns the layers shown."""
    colours, shown = tg.colours, []
    memo = canvas.label_memo

    def put(name: str, masks: tuple[np.ndarray, ...], box: tuple[int, int, int, int], flag: object,
            make: Callable[[], np.ndarray], table: list[int], z: float) -> None:
        # a label map depends only on its masks (the store's arrays: same object = same mask), the
        # box and the outline flag; an opacity or colour change reuses it and swaps the table
        hit = memo.get(name)
        ready = prepared.get(name, masks, box, flag) if prepared is not None else None
        if (hit is not None and hit[1] == (box, flag) and len(hit[0]) == len(masks)
                and all(a is b for a, b in zip(hit[0], masks, strict=True))):
            labels = hit[2]
        else:
            labels = ready.labels if ready is not None else make()
            memo[name] = (masks, (box, flag), labels)
            if ready is None and prepared is not None:  # a new panel of the same masks reuses it
                prepared.put(name, masks, box, flag, Prepared(labels))
        image = ready.image_for(table) if ready is not None else None
        pixmap = QPixmap.fromImage(image) if image is not None else to_pixmap(labels, table)
        canvas.set_layer(name, pixmap, z=z, pos=box[:2])
        shown.append(name)

    if tg.error and gts:
        masks = (gts[0], *inst)
        box = union_box([box_of(m) for m in masks])
        if box is not None:
            def errors(masks: tuple[np.ndarray, ...] = masks, box: tuple[int, int, int, int] = box) -> np.ndarray:
                g, *ps = crop(list(masks), box)
                union = np.logical_or.reduce(ps) if ps else np.zeros_like(g)
                return error_labels(np.ascontiguousarray(g), union)

            table = error_table(colours["tp"], colours["fp"], colours["fn"], max(tg.pred_opacity, 0.85))
            put("error", masks, box, None, errors, table, 3)
        return shown
    if tg.pred and inst:
        pred_box = union_box([box_of(m) for m in inst])
        if pred_box is not None:
            put("pred", tuple(inst), pred_box, tg.outlines, lambda: instance_labels(crop(inst, pred_box), tg.outlines),
                instance_table(tg.pred_opacity), 5)
    if tg.gt:  # above the prediction, so that its outline stays visible
        for i, m in enumerate(gts):
            box = box_of(m)
            if box is None:
                continue
            (sub,) = crop([m], box)
            if i == 0:
                put("gt", (m,), box, tg.outlines, partial(ground_truth_labels, sub, tg),
                    ground_truth_table(tg), 6)
            else:  # further ground truths (e.g. R2SM's other mask): outline only
                put(f"gt{i + 1}", (m,), box, True, partial(layer_labels, sub, True, 3),
                    layer_table(colours["gt2"], 0.0), 7 + i)
    return shown


class SampleViewWidget(QWidget):
    """A grid of panels; the panels' canvases pan and zoom together.

    Drawn prompts: every canvas follows ``tool``; ``boxDrawn(image, box)`` and
    ``pointClicked(image, point)`` name the image of the panel drawn on, and ``marks``
    (image key -> (boxes, points)) are shown on every panel of that image."""

    boxDrawn = Signal(str, tuple)
    pointClicked = Signal(str, tuple)
    editMouse = Signal(int, str, float, float, int)  # panel index, then Canvas.editMouse's values

    def __init__(self, parent: QWidget | None = None, *,
                 marks_for: Callable[[PanelSpec], tuple[list, list] | None] | None = None) -> None:
        """``marks_for(spec)``: a panel's own drawn prompt (e.g. the boxes a typed-prompt result
        was run with), else None (the prompt drawn on its image, if any)."""
        super().__init__(parent)
        self.tool = "pan"
        self.marks: dict[str, tuple[list, list]] = {}
        self._most = 0  # the panels' largest image size, once known (best_columns)
        self._layout_key: tuple[int, int] | None = None  # what the grid was laid out for
        self.marks_for: Callable[[PanelSpec], tuple[list, list] | None] = marks_for or (lambda spec: None)
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(3)
        self.panels: list[Panel] = []
        self.specs: list[PanelSpec] = []
        self._drawing = 0  # drawings started; a panel left for a later turn belongs to one of them
        self._left: list[tuple[Panel, PanelSpec]] = []  # panels still to draw, in later turns
        self.sync = SyncGroup()
        self.empty = QLabel("Open a benchmark (File › Open benchmark…) or drop a file here.")
        self.empty.setStyleSheet("color: gray; font-size: 14px;")
        self.grid.addWidget(self.empty, 0, 0)

    def best_columns(self, n: int, most: int) -> int:
        """Up to ``most`` columns: the count that gives ``n`` panels of the shown image's aspect
        the largest size in this widget (four CGEBench levels in a narrow centre: 2 x 2, not 4 x 1)."""
        if n <= 1 or self.width() < 50 or self.height() < 50:
            return max(1, min(most, n))
        rect = self.panels[0].canvas.sceneRect() if self.panels else None
        aspect = rect.width() / rect.height() if rect is not None and rect.height() > 0 else 4 / 3
        W, H = self.width(), self.height() - 40  # noqa: N806 - a panel's title and caption rows

        def side(c: int) -> float:
            rows = (n + c - 1) // c
            return min(W / c / aspect, H / rows)  # the image's height at this grid

        return max(range(1, max(1, min(most, n)) + 1), key=lambda c: (side(c), -c))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if self.panels and self._most:
            columns = self.best_columns(len(self.panels), self._most)
            if self._layout_key is None or columns != self._layout_key[1]:
                self._arrange(columns)

    def _arrange(self, columns: int) -> None:
        """Place the existing panels on a grid of ``columns`` (no redraw needed)."""
        n = len(self.panels)
        for p in self.panels:
            self.grid.removeWidget(p)
        for c in range(8):
            self.grid.setColumnStretch(c, 1 if c < columns else 0)
            self.grid.setRowStretch(c, 1 if c < (n + columns - 1) // max(columns, 1) else 0)
        for i, p in enumerate(self.panels):
            self.grid.addWidget(p, i // columns, i % columns)
        self._layout_key = (n, columns)

    def _ensure(self, n: int, most: int) -> None:
        self._most = most
        columns = self.best_columns(n, most)
        layout_key = (n, columns)
        if self._layout_key == layout_key:
            return
        had_focus = any(p.canvas.hasFocus() for p in self.panels)  # keep the one-key shortcuts
        for p in self.panels:
            self.grid.removeWidget(p)
            p.hide()  # until deleteLater runs it would show through the new grid's spacing
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
            p.canvas.set_tool(self.tool)
            p.canvas.boxDrawn.connect(lambda *b, i=i: self._drawn(i, self.boxDrawn, b))
            p.canvas.pointClicked.connect(lambda *q, i=i: self._drawn(i, self.pointClicked, q))
            p.canvas.editMouse.connect(lambda *e, i=i: self.editMouse.emit(i, *e))
        if had_focus and self.panels:
            self.panels[0].canvas.setFocus(Qt.FocusReason.OtherFocusReason)
        self._layout_key = layout_key

    def show_panels(self, specs: list[PanelSpec], ctx: RenderContext | None, columns: int,
                    *, in_turns: bool = False, cold_later: bool = False) -> None:
        """Draw ``specs`` on the panels. ``in_turns`` (a new model result): when they hold over
        ``TURN_INSTANCES`` instances, the panels are drawn from the next event-loop turn on, about
        that many instances per turn, so that the window answers in between (``drawing_left``).
        ``cold_later`` (a sample switch): when a panel still has masks to decode, the images are
        drawn now and every panel's layers in the next turn (a first visit's two halves, each
        under the GUI-stall budget, rather than one over it)."""
        self._ensure(len(specs) if ctx else 0, columns)
        self.specs = list(specs) if ctx else []
        self._drawing += 1  # what an older drawing left undrawn is dropped
        self._left = list(zip(self.panels, specs, strict=True)) if ctx else []
        if ctx is None:
            return
        if in_turns and sum(panel_instances(spec, ctx) for spec in specs) > TURN_INSTANCES:
            drawing = self._drawing
            QTimer.singleShot(TURN_GAP_MS, self, lambda: self._draw_some(drawing, ctx))
            return
        if cold_later and any(panel_is_cold(spec, ctx) for spec in specs):
            for panel, spec in self._left:
                render_panel(panel, spec, ctx, layers=False)
            drawing = self._drawing
            QTimer.singleShot(TURN_GAP_MS, self, lambda: self._draw_some(drawing, ctx, everything=True))
            return
        self._draw_some(self._drawing, ctx, everything=True)

    def _draw_some(self, drawing: int, ctx: RenderContext, everything: bool = False) -> None:
        """Draw the panels left, up to ``TURN_INSTANCES`` instances (or all); the rest next turn."""
        if drawing != self._drawing:
            return
        count = 0
        while self._left and (everything or count < TURN_INSTANCES):
            panel, spec = self._left.pop(0)
            render_panel(panel, spec, ctx)
            count += panel_instances(spec, ctx)
        if self._left:
            QTimer.singleShot(TURN_GAP_MS, self, lambda: self._draw_some(drawing, ctx))
        else:
            self.draw_marks()

    def drawing_left(self) -> int:
        """How many panels are still to be drawn in later event-loop turns."""
        return len(self._left)

    # ------------------------------------------------------------ drawn prompts
    def set_tool(self, tool: str) -> None:
        self.tool = tool
        for p in self.panels:
            p.canvas.set_tool(tool)

    def _drawn(self, i: int, signal: SignalInstance, value: tuple) -> None:
        if i < len(self.specs):
            signal.emit(self.specs[i].image, tuple(value))

    def draw_marks(self) -> None:
        """Show ``marks`` on the panels of their image (and clear the others)."""
        for panel, spec in zip(self.panels, self.specs, strict=False):
            boxes, points = self.marks_for(spec) or self.marks.get(spec.image, ([], []))
            panel.canvas.set_marks(boxes, points)

    def fit(self) -> None:
        if self.panels:
            self.panels[0].canvas.fit()

    def one_to_one(self) -> None:
        if self.panels:
            self.panels[0].canvas.one_to_one()
