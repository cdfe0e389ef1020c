"""The image canvas: a QGraphicsView with zoom (wheel, fit, 1:1), pan, overlay layers and labels,
and a :class:`SyncGroup` that keeps several canvases' pan/zoom together."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QImage, QPainter, QPixmap, QTransform
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsPixmapItem,
    QGraphicsScene,
    QGraphicsTextItem,
    QGraphicsView,
    QLabel,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from masklens.gui.key_scope import show_focus

MIN_SCALE, MAX_SCALE = 0.02, 64.0


class Canvas(QGraphicsView):
    """Shows one image and named overlay layers; emits ``viewChanged`` on pan/zoom."""

    viewChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        self.setBackgroundBrush(QBrush(QColor("#202124")))
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # a click gives it the one-key shortcuts
        show_focus(self, "QGraphicsView")
        self._image = QGraphicsPixmapItem()
        self.scene().addItem(self._image)
        self._layers: dict[str, QGraphicsPixmapItem] = {}
        #: layer name -> (masks, key, label map) of its last overlay (see sample_view.build_layers)
        self.label_memo: dict[str, tuple] = {}
        self._labels: list[QGraphicsTextItem] = []
        self._fitted = True
        self._size = (0, 0)
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
        """Text labels (x, y, text, colour) in image coordinates, drawn at a constant size."""
        for item in self._labels:
            self.scene().removeItem(item)
        self._labels = []
        for x, y, text, colour in labels:
            item = QGraphicsTextItem()
            ink = "black" if QColor(colour).lightnessF() > 0.45 else "white"
            item.setHtml(f"<span style='background-color:{colour}; color:{ink};"
                         f" font-weight:bold'>&nbsp;{text}&nbsp;</span>")
            item.setFlag(item.GraphicsItemFlag.ItemIgnoresTransformations)
            item.setPos(QPointF(x, y))
            # sit just above the instance's box (device pixels, whatever the zoom)
            item.setTransform(QTransform.fromTranslate(-4, -item.boundingRect().height() + 4))
            item.setZValue(100)
            self.scene().addItem(item)
            self._labels.append(item)

    def label_texts(self) -> list[str]:
        return [i.toPlainText().strip() for i in self._labels]

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


class Panel(QFrame):
    """A titled canvas with a one-line caption (e.g. the readout that decided this prompt)."""

    def __init__(self, title: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title = QLabel(title)
        self.title.setStyleSheet("font-weight: bold; padding: 2px;")
        self.title.setWordWrap(False)
        self.canvas = Canvas(self)
        self.caption = QLabel("")
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
