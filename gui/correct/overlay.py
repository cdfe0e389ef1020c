"""The edit's overlays on a canvas: a label map drawn straight from a numpy buffer, re-composed
only inside the box an operation changed.

:class:`MaskItem` keeps an Indexed8 QImage over its own uint8 label array (fill 1, outline 2;
the QImage shares the buffer, nothing is copied per stroke). :meth:`MaskItem.refresh` rewrites
the labels of the changed box (plus the outline's reach) and asks the scene to repaint that
rectangle only; ``paint`` converts just the exposed part of the image.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPainterPath, QPen, QTransform
from PySide6.QtWidgets import QGraphicsEllipseItem, QGraphicsItem, QGraphicsPathItem

from masklens.gui.canvas.overlays import layer_labels, layer_table

OUTLINE = 2  # pixels of the outline drawn inside the mask's edge


class MaskItem(QGraphicsItem):
    """Shows a bool mask (H×W, at the mask's resolution) scaled onto an image of ``image_size``;
    with ``original``, the pixels the edit removed from it are darkened (label 3), so that an
    erased part reads as erased over the ground-truth layer underneath."""

    def __init__(self, mask: np.ndarray, image_size: tuple[int, int], colour: str, opacity: float,
                 z: float = 50.0, original: np.ndarray | None = None) -> None:
        super().__init__()
        h, w = mask.shape
        self.mask = mask  # the session's array: read, never written here
        self.original = original
        stride = (w + 3) // 4 * 4  # 32-bit aligned scanlines, as QImage wants
        self._buffer = np.zeros((h, stride), np.uint8)
        self.labels = self._buffer[:, :w]
        self.image = QImage(self._buffer.data, w, h, stride, QImage.Format.Format_Indexed8)
        table = layer_table(colour, opacity)
        table[3] = QColor(0, 0, 0, 150).rgba()  # removed by the edit
        self.image.setColorTable(table)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)  # exposedRect is set
        iw, ih = image_size
        self.setTransform(QTransform.fromScale(iw / w, ih / h))
        self.setZValue(z)
        self.refresh((0, 0, w, h))

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return QRectF(0, 0, self.image.width(), self.image.height())

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: ANN001 - Qt override
        r = option.exposedRect.toAlignedRect().intersected(self.image.rect())
        if not r.isEmpty():
            painter.drawImage(r, self.image, r)

    def refresh(self, box: tuple[int, int, int, int] | None) -> None:
        """Re-compose the labels of ``box`` (x0, y0, x1, y1; None: nothing changed) and repaint it."""
        if box is None:
            return
        h, w = self.mask.shape
        x0, y0, x1, y1 = box
        m = OUTLINE + 1  # the outline of pixels next to the box changes too
        x0, y0, x1, y1 = max(0, x0 - m), max(0, y0 - m), min(w, x1 + m), min(h, y1 + m)
        if x1 <= x0 or y1 <= y0:
            return
        cx0, cy0, cx1, cy1 = max(0, x0 - m), max(0, y0 - m), min(w, x1 + m), min(h, y1 + m)  # context
        sub = layer_labels(np.ascontiguousarray(self.mask[cy0:cy1, cx0:cx1]), True, OUTLINE)
        region = self.labels[y0:y1, x0:x1]
        region[...] = sub[y0 - cy0:y1 - cy0, x0 - cx0:x1 - cx0]
        if self.original is not None:
            np.copyto(region, np.uint8(3), where=self.original[y0:y1, x0:x1] & ~self.mask[y0:y1, x0:x1])
        self.update(QRectF(x0, y0, x1 - x0, y1 - y0))


def polyline_item(points: list[tuple[float, float]], colour: str = "#F0E442") -> QGraphicsPathItem:
    """The polygon being drawn (image coordinates), a dashed cosmetic line."""
    path = QPainterPath()
    for i, (x, y) in enumerate(points):
        (path.lineTo if i else path.moveTo)(QPointF(x, y))
    item = QGraphicsPathItem(path)
    pen = QPen(QColor(colour), 2, Qt.PenStyle.DashLine)
    pen.setCosmetic(True)
    item.setPen(pen)
    item.setZValue(160)
    return item


def brush_item() -> QGraphicsEllipseItem:
    """The brush's outline under the mouse (its rect is set in image coordinates)."""
    item = QGraphicsEllipseItem()
    pen = QPen(QColor("white"), 1)
    pen.setCosmetic(True)
    item.setPen(pen)
    item.setZValue(170)
    return item
