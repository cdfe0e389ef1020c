"""The image canvas: a QGraphicsView with zoom (wheel, fit, 1:1), pan, overlay layers and labels,
and a :class:`SyncGroup` that keeps several canvases' pan/zoom together."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QImage, QPainter, QPen, QPixmap, QTransform
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsEllipseItem,
    QGraphicsItem,
    QGraphicsPixmapItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsView,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from masklens.gui.canvas.score_label import label_text, new_label, show_text
from masklens.gui.widgets.elided_label import OwnBackground
from masklens.gui.window.key_scope import show_focus

MIN_SCALE, MAX_SCALE = 0.02, 64.0


class Canvas(QGraphicsView):
    """Shows one image and named overlay layers; emits ``viewChanged`` on pan/zoom.

    With ``set_tool("box")`` a drag draws a box and emits ``boxDrawn(x0, y0, x1, y1)``; with
    ``set_tool("point")`` a click emits ``pointClicked(x, y, label)`` (left: positive 1, right or
    Shift+left: negative 0). Coordinates are image pixels. ``set_marks`` shows drawn prompts.
    With ``set_tool("correct")`` the mouse goes to ``editMouse(phase, x, y, alternate)`` (phase
    "press" / "move" / "release"; alternate: right button or Shift) for the correction tools."""

    viewChanged = Signal()
    boxDrawn = Signal(float, float, float, float)
    pointClicked = Signal(float, float, int)
    editMouse = Signal(str, float, float, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        self.setBackgroundBrush(QBrush(QColor("#202124")))
        # the view fills all of its viewport (background brush, then the scene): what lies under
        # it is not painted first on every redraw (a new sample, a t step)
        self.viewport().setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # a click gives it the one-key shortcuts
        show_focus(self, "QGraphicsView")
        self._image = QGraphicsPixmapItem()
        self.scene().addItem(self._image)
        self._layers: dict[str, QGraphicsPixmapItem] = {}
        #: layer name -> (masks, key, label map) of its last overlay (see sample_view.build_layers)
        self.label_memo: dict[str, tuple] = {}
        self._labels: list[QGraphicsRectItem] = []  # see score_label
        self._fitted = True
        self._size = (0, 0)
        self.tool = "pan"
        self._drag_start: QPointF | None = None
        self._rubber: QGraphicsRectItem | None = None
        self._marks: list[QGraphicsItem] = []
        self.horizontalScrollBar().valueChanged.connect(lambda _: self.viewChanged.emit())
        self.verticalScrollBar().valueChanged.connect(lambda _: self.viewChanged.emit())

    # ------------------------------------------------------------ content
    def set_image(self, image: QImage | QPixmap) -> None:
        size = (image.width(), image.height())
        self._image.setPixmap(image if isinstance(image, QPixmap) else QPixmap.fromImage(image))
        if size != self._size:
            self._size = size
            self.scene().setSceneRect(QRectF(0, 0, *size))
            self._fitted = True
        if self._fitted:
            self.fit()

    def image_size(self) -> tuple[int, int]:
        """(width, height) of the image shown, in pixels ((0, 0) before one is set)."""
        return self._size

    def set_image_opacity(self, opacity: float) -> None:
        """Dim the image (e.g. under the error view, so the TP/FP/FN colours stand out)."""
        self._image.setOpacity(opacity)

    def set_layer(self, name: str, pixmap: QPixmap | None, z: float = 1.0, visible: bool = True,
                  pos: tuple[int, int] = (0, 0)) -> None:
        """Show ``pixmap`` as layer ``name`` with its top-left at ``pos`` (None removes it)."""
        item = self._layers.get(name)
        if pixmap is None:
            if item is not None:
                self.scene().removeItem(item)
                del self._layers[name]
            return
        if item is None:
            item = QGraphicsPixmapItem()
            self.scene().addItem(item)
            self._layers[name] = item
        item.setPixmap(pixmap)
        item.setOffset(*pos)
        item.setZValue(z)
        item.setVisible(visible)

    def layer_names(self) -> list[str]:
        return [n for n, item in self._layers.items() if item.isVisible()]

    def keep_layers(self, names: list[str]) -> None:
        """Remove every layer not named in ``names``."""
        for name in [n for n in self._layers if n not in names]:
            self.set_layer(name, None)

    def set_labels(self, labels: list[tuple[float, float, str, str]]) -> None:
        """Text labels (x, y, text, colour) in image coordinates, drawn at a constant size (the
        items already shown are reused: a label's text is laid out again only when it changes)."""
        for item in self._labels[len(labels):]:
            self.scene().removeItem(item)
        del self._labels[len(labels):]
        for i, (x, y, text, colour) in enumerate(labels):
            if i < len(self._labels):
                item = self._labels[i]
            else:
                item = new_label()
                self.scene().addItem(item)
                self._labels.append(item)
            if item.data(0) != f"{text}\n{colour}":
                show_text(item, text, colour)
                item.setData(0, f"{text}\n{colour}")
                # sit just above the instance's box (device pixels, whatever the zoom)
                item.setTransform(QTransform.fromTranslate(-4, -item.boundingRect().height() + 4))
            item.setPos(QPointF(x, y))

    def label_texts(self) -> list[str]:
        return [label_text(i) for i in self._labels]

    # ------------------------------------------------------------ zoom / pan
    def scale_factor(self) -> float:
        return self.transform().m11()

    def fit(self) -> None:
        if self._size[0] and self._size[1]:
            self.fitInView(self.sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)
        self._fitted = True
        self.viewChanged.emit()

    def one_to_one(self) -> None:
        self.resetTransform()
        self._fitted = False
        self.viewChanged.emit()

    def zoom(self, factor: float) -> None:
        new = self.scale_factor() * factor
        if MIN_SCALE <= new <= MAX_SCALE:
            self.scale(factor, factor)
            self._fitted = False
            self.viewChanged.emit()

    def wheelEvent(self, event) -> None:  # noqa: N802 - Qt override
        steps = event.angleDelta().y() / 120.0
        if steps:
            self.zoom(1.25**steps)
        event.accept()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if self._fitted:
            self.fit()


    # ------------------------------------------------------------ visual prompts
    def set_tool(self, tool: str) -> None:
        """"pan" (drag pans), "box" (drag draws a box) or "point" (click adds a point)."""
        self.cancel_drawing()
        self.tool = tool
        pan = tool == "pan"
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag if pan else QGraphicsView.DragMode.NoDrag)
        self.viewport().setCursor(Qt.CursorShape.OpenHandCursor if pan else Qt.CursorShape.CrossCursor)
        self.viewport().setMouseTracking(tool == "correct")  # the brush outline follows the mouse

    def cancel_drawing(self) -> None:
        if self._rubber is not None:
            self.scene().removeItem(self._rubber)
        self._rubber, self._drag_start = None, None

    def _image_point(self, event) -> QPointF:
        p = self.mapToScene(event.position().toPoint())
        w, h = self._size
        return QPointF(min(max(p.x(), 0.0), float(w)), min(max(p.y(), 0.0), float(h)))

    def _on_image(self, event) -> bool:
        """Whether the mouse is over the image itself (not the margin around it)."""
        p = self.mapToScene(event.position().toPoint())
        w, h = self._size
        return 0.0 <= p.x() <= w and 0.0 <= p.y() <= h

    def _edit(self, phase: str, event) -> bool:
        if self.tool != "correct":
            return False
        if phase == "press":
            self.setFocus(Qt.FocusReason.MouseFocusReason)
        p = self._image_point(event)
        alternate = (event.button() == Qt.MouseButton.RightButton or bool(event.buttons() & Qt.MouseButton.RightButton)
                     or bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier))
        self.editMouse.emit(phase, p.x(), p.y(), int(alternate))
        event.accept()
        return True

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt override
        if self._edit("press", event):
            return
        if self.tool == "box" and event.button() == Qt.MouseButton.LeftButton:
            self.setFocus(Qt.FocusReason.MouseFocusReason)
            self._drag_start = self._image_point(event)
            self._rubber = QGraphicsRectItem(QRectF(self._drag_start, self._drag_start))
            self._rubber.setPen(_mark_pen("#F0E442", dashed=True))
            self._rubber.setZValue(200)
            self.scene().addItem(self._rubber)
            event.accept()
            return
        if self.tool == "point" and event.button() in (Qt.MouseButton.LeftButton, Qt.MouseButton.RightButton):
            self.setFocus(Qt.FocusReason.MouseFocusReason)
            if not self._on_image(event):  # the dark margin: no point (it was put on the image's edge)
                event.accept()
                return
            p = self._image_point(event)
            negative = (event.button() == Qt.MouseButton.RightButton
                        or bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier))
            self.pointClicked.emit(round(p.x(), 1), round(p.y(), 1), 0 if negative else 1)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt override
        if self._edit("move", event):
            return
        if self._rubber is not None and self._drag_start is not None:
            self._rubber.setRect(QRectF(self._drag_start, self._image_point(event)).normalized())
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 - Qt override
        if self._edit("release", event):
            return
        if self._rubber is not None and self._drag_start is not None:
            r = QRectF(self._drag_start, self._image_point(event)).normalized()
            self.cancel_drawing()
            if r.width() >= 2 and r.height() >= 2:  # a click is not a box
                self.boxDrawn.emit(round(r.left(), 1), round(r.top(), 1), round(r.right(), 1), round(r.bottom(), 1))
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def contextMenuEvent(self, event) -> None:  # noqa: N802 - Qt override
        if self.tool in ("point", "correct"):  # the right button places a negative point
            event.accept()
            return
        super().contextMenuEvent(event)

    def set_marks(self, boxes: list[tuple[float, float, float, float]],
                  points: list[tuple[float, float, int]]) -> None:
        """Show drawn boxes (dashed yellow) and points (green +, vermillion −) in image coordinates."""
        for item in self._marks:
            self.scene().removeItem(item)
        self._marks = []
        for x0, y0, x1, y1 in boxes:
            item = QGraphicsRectItem(QRectF(x0, y0, x1 - x0, y1 - y0))
            item.setPen(_mark_pen("#F0E442", dashed=True))
            self._marks.append(item)
        for x, y, label in points:
            item = QGraphicsEllipseItem(-6, -6, 12, 12)
            item.setBrush(QBrush(QColor("#009E73" if label else "#D55E00")))
            item.setPen(_mark_pen("white"))
            item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)  # constant size
            item.setPos(QPointF(x, y))
            self._marks.append(item)
        for item in self._marks:
            item.setZValue(150)
            self.scene().addItem(item)

    def marks(self) -> list[tuple[str, tuple[float, ...]]]:
        """The drawn prompts shown, as ("box", (x0, y0, x1, y1)) / ("point", (x, y)) (for tests)."""
        out: list[tuple[str, tuple[float, ...]]] = []
        for item in self._marks:
            if isinstance(item, QGraphicsRectItem):
                r = item.rect()
                out.append(("box", (r.left(), r.top(), r.right(), r.bottom())))
            else:
                out.append(("point", (item.pos().x(), item.pos().y())))
        return out


def _mark_pen(colour: str, dashed: bool = False) -> QPen:
    pen = QPen(QColor(colour), 2)
    pen.setCosmetic(True)  # the same width at every zoom
    if dashed:
        pen.setStyle(Qt.PenStyle.DashLine)
    return pen


class SyncGroup:
    """Keeps the transforms and scroll positions of several canvases equal."""

    def __init__(self) -> None:
        self.canvases: list[Canvas] = []
        self._busy = False

    def add(self, canvas: Canvas) -> None:
        self.canvases.append(canvas)
        canvas.viewChanged.connect(lambda c=canvas: self._follow(c))

    def clear(self) -> None:
        self.canvases = []

    def _follow(self, source: Canvas) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            for c in self.canvases:
                if c is source:
                    continue
                c.setTransform(source.transform())
                c._fitted = source._fitted
                c.horizontalScrollBar().setValue(source.horizontalScrollBar().value())
                c.verticalScrollBar().setValue(source.verticalScrollBar().value())
        finally:
            self._busy = False


class ElidedLabel(OwnBackground):
    """A one-line label that ends in "…" when narrower than its text (``text()`` stays whole);
    the whole text is its tooltip unless one was set."""

    _auto_tip = ""  # the tooltip this label set itself (replaced when the text changes)

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.fill_own_background()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.paint_background(event)
        rect = self.contentsRect().adjusted(2, 2, -2, -2)  # the panels' "padding: 2px"
        text = self.text()
        elided = self.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, rect.width())
        if self.toolTip() in ("", self._auto_tip):  # none set by the caller: the whole text when cut
            self._auto_tip = text if elided != text else ""
            self.setToolTip(self._auto_tip)
        if elided == text:
            super().paintEvent(event)
            return
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(rect, int(self.alignment()), elided)


class Panel(QFrame):
    """A titled canvas with a one-line caption (e.g. the readout that decided this prompt)."""

    def __init__(self, title: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title = ElidedLabel(title)
        self.title.setStyleSheet("font-weight: bold; padding: 2px;")
        self.title.setWordWrap(False)
        self.canvas = Canvas(self)
        self.caption = ElidedLabel("")
        self.caption.setStyleSheet("padding: 2px; font-family: monospace;")
        self.caption.setWordWrap(False)
        for label in (self.title, self.caption):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.setSpacing(1)
        lay.addWidget(self.title)
        lay.addWidget(self.canvas, 1)
        lay.addWidget(self.caption)
