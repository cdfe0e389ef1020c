"""A new model result's overlay made in the worker that produced it, so that the GUI thread only
shows it: the masks decoded at the image's size (into the image store), their boxes, the instance
label map and its ARGB image, found again by :func:`~masklens.gui.canvas.sample_view.build_layers`
from the very arrays it is asked to draw (nothing is drawn from a stale entry)."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PySide6.QtGui import QImage

from masklens.core.masks import Mask


@dataclass(frozen=True)
class Prepared:
    """A label map and, for one colour table, its image ready to become a pixmap (or none)."""

    labels: np.ndarray
    table: tuple[int, ...] = ()
    image: QImage | None = None

    def image_for(self, table: Sequence[int]) -> QImage | None:
        """The ready image when ``table`` is the one it was made with, else None."""
        return self.image if self.image is not None and tuple(table) == self.table else None


class PreparedLayers:
    """Label maps made off the GUI thread (or by another panel), keyed by the identity of the mask
    arrays they were made from, the layer, the box and the outline flag (thread-safe). The arrays
    are held weakly (an entry whose arrays were freed is never found: their ids may be reused), so
    only the label maps and images count: the newest are kept within ``budget`` bytes."""

    def __init__(self, budget: int = 128 << 20) -> None:
        self.budget = budget
        self._items: OrderedDict[tuple[Any, ...], tuple[tuple[weakref.ref, ...], Prepared, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @staticmethod
    def _key(layer: str, masks: Sequence[np.ndarray], box: tuple[int, int, int, int],
             flag: object) -> tuple[Any, ...]:
        return (layer, tuple(id(m) for m in masks), tuple(box), flag)

    def put(self, layer: str, masks: Sequence[np.ndarray], box: tuple[int, int, int, int], flag: object,
            prepared: Prepared) -> None:
        """Keep ``prepared``, the label map of ``layer`` ("pred", "gt", …) over ``masks``."""
        size = prepared.labels.nbytes + (prepared.image.sizeInBytes() if prepared.image is not None else 0)
        with self._lock:
            old = self._items.pop(self._key(layer, masks, box, flag), None)
            if old is not None:
                self._bytes -= old[2]
            self._items[self._key(layer, masks, box, flag)] = (tuple(weakref.ref(m) for m in masks), prepared, size)
            self._bytes += size
            while self._bytes > self.budget and len(self._items) > 1:
                _, (_refs, _old, freed) = self._items.popitem(last=False)
                self._bytes -= freed

    def get(self, layer: str, masks: Sequence[np.ndarray], box: tuple[int, int, int, int],
            flag: object) -> Prepared | None:
        with self._lock:
            hit = self._items.get(self._key(layer, masks, box, flag))
            if hit is None or not all(r() is m for r, m in zip(hit[0], masks, strict=True)):
                return None
            return hit[1]


def prepare_instances(store: Any, masks: Sequence[Mask], height: int, width: int, *, outlines: bool,
                      opacity: float) -> Prepared | None:
    """Do off the GUI thread what drawing ``masks`` (the accepted instances of a new result, best
    first) as the "pred" layer of an image of ``height`` × ``width`` would do on it: decode them
    into ``store``, their boxes, their instance label map and its ARGB image (colours for
    ``opacity``); also each mask's COCO box (the score labels' anchor). None when all are empty."""
    from masklens.gui.canvas.overlays import crop, indexed_image, instance_labels, instance_table
    from masklens.gui.canvas.sample_view import union_box

    arrays = [store.mask(m, height, width) for m in masks]
    box = union_box([store.box(a) for a in arrays])
    if box is None:
        return None
    labels = instance_labels(crop(arrays, box), outlines)
    table = instance_table(opacity)
    image = indexed_image(labels, table).convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    prepared = Prepared(labels, tuple(table), image)
    store.prepared.put("pred", arrays, box, outlines, prepared)
    return prepared


def overlay_maker(store: Any, threshold: float, toggles: Any, size: tuple[int, int]) -> Callable[[Any], None]:
    """What a prompt job calls with its new prediction to make its "pred" overlay off the GUI
    thread as the window would draw it now: the instances scoring ≥ ``threshold``, ``toggles``'
    outlines and opacity of this moment (when they change before the result arrives, drawing
    finds nothing ready and makes it as usual), on an image of ``size`` (height, width)."""
    outlines, opacity = toggles.outlines, toggles.pred_opacity

    def make(prediction: Any) -> None:
        for instance in prediction.instances:  # what the score labels ask, for any threshold: here,
            _ = instance.mask.area, instance.mask.bbox  # not on the GUI thread (pycocotools, ~1 ms each)
        accepted = [i.mask for i in prediction.instances if i.score >= threshold]
        if accepted:
            prepare_instances(store, accepted, *size, outlines=outlines, opacity=opacity)

    return make
