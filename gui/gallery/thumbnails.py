"""Gallery thumbnails: drawn off the GUI thread, kept in a byte-bounded LRU.

A thumbnail is the sample's first panel (the Sample tab's view: its image, its prompt's
prediction, the ground truth that prompt is scored against), shrunk to the tile and coloured
as the error view: both (TP) bluish green, prediction only (FP) vermillion, ground truth only
(FN) blue (Okabe–Ito, the report's gallery colours). Only instances scored ≥ t are drawn.

:class:`ThumbLoader` runs :func:`make_thumbnail` on its own thread; the view tells it which
tiles are visible (:meth:`ThumbLoader.want`), which replaces what was pending: a tile scrolled
past before its turn is never drawn. After an input (a key, a click, a scroll, a sample switch)
the thread waits :data:`YIELD_MS` before its next thumbnail (:meth:`ThumbLoader.yield_to_gui`):
the GUI thread answers the input with the GIL to itself instead of sharing it a switch interval
at a time with a thread that wants it back at once (at 100,000 samples that sharing doubled the
window's stall on PgDn: 36 ms median instead of 18).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage

from masklens.core.errors import DataFormatError
from masklens.core.masks import union_all
from masklens.core.schema import Sample
from masklens.gui.jobs.workers import gui_friendly

log = logging.getLogger(__name__)

#: Okabe–Ito: both (TP) bluish green, prediction only (FP) vermillion, ground truth only (FN) blue
TP, FP, FN = (0, 158, 115), (213, 94, 0), (0, 114, 178)
ALPHA = 0.6
#: after an input the thumbnail thread waits this long (ms) before drawing on: about what the
#: window takes to answer one at 100,000 samples (the gallery, the list and the readout redrawn)
YIELD_MS = 40
#: inputs that keep coming (a held key, a long wheel or touchpad scroll) hold a thumbnail back at
#: most this long (ms): one is drawn then, so the tiles still fill in while the user scrolls on
HELD_MAX_MS = 150
#: the bytes the thumbnails of one gallery may hold (≈ 1,300 tiles of 160 × 120)
CACHE_BYTES = 96 << 20


@dataclass(frozen=True)
class ThumbSpec:
    """What one thumbnail shows: ``image`` / ``prompt_id`` / ``gt`` keys of ``sample``."""

    sample: Sample
    image: str | None
    prompt_id: str | None
    gt: str | None


def make_thumbnail(spec: ThumbSpec, prediction: Any, t: float, width: int, height: int) -> QImage:
    """The tile's picture (RGB, at most ``width`` × ``height``, aspect kept): the image faded,
    ground truth and the kept instances as TP / FP / FN colours. Runs on any thread."""
    import cv2

    s = spec.sample
    ref = s.images.get(spec.image) if spec.image else None
    gt = s.gts.get(spec.gt) if spec.gt else None
    h, w = (gt.height, gt.width) if gt is not None else (ref.height, ref.width) if ref is not None else (64, 64)
    scale = min(width / max(w, 1), height / max(h, 1))
    tw, th = max(1, round(w * scale)), max(1, round(h * scale))
    rgb = _image(ref, tw, th)
    gt_small = _shrink(gt.union().to_array() if gt is not None and gt.masks else None, tw, th)
    keep = [i for i in prediction.instances if i.score >= t] if prediction is not None else []
    pred = union_all([i.mask.resized(h, w) for i in keep], h, w).to_array() if keep else None
    pred_small = _shrink(pred, tw, th)
    out = 0.55 * rgb.astype(np.float32) + 0.45 * 255.0
    for sel, colour in ((gt_small & pred_small, TP), (pred_small & ~gt_small, FP), (gt_small & ~pred_small, FN)):
        out[sel] = (1 - ALPHA) * out[sel] + ALPHA * np.asarray(colour, np.float32)
    out8 = np.ascontiguousarray(out.astype(np.uint8))
    edge = gt_small.astype(np.uint8) - cv2.erode(gt_small.astype(np.uint8), np.ones((3, 3), np.uint8))
    out8[edge > 0] = FN
    # in the window's own pixel format: painting it is a copy, not a conversion per paint
    return QImage(out8.data, tw, th, 3 * tw, QImage.Format.Format_RGB888).convertToFormat(
        QImage.Format.Format_RGB32)


def _image(ref: Any, tw: int, th: int) -> np.ndarray:
    """The image shrunk to the tile; a flat grey one when it has no readable file."""
    import cv2

    if ref is not None and ref.path is not None:
        try:
            from masklens.core.files.images import read_image

            img = read_image(Path(ref.path), (ref.height, ref.width))
            return cv2.resize(img, (tw, th), interpolation=cv2.INTER_AREA)
        except (DataFormatError, OSError, ValueError):
            pass
    return np.full((th, tw, 3), 200, np.uint8)


def _shrink(mask: np.ndarray | None, tw: int, th: int) -> np.ndarray:
    import cv2

    if mask is None:
        return np.zeros((th, tw), bool)
    return cv2.resize(mask.astype(np.uint8), (tw, th), interpolation=cv2.INTER_NEAREST) > 0


class ThumbCache:
    """Thumbnails by (sample id, variant), least recently used dropped past ``budget`` bytes.
    ``latest(sid)``: the newest thumbnail of a sample whatever its variant (shown, stale, while
    the current one is drawn, e.g. after a t step)."""

    def __init__(self, budget: int = CACHE_BYTES) -> None:
        self.budget = budget
        self.bytes = 0
        self._items: OrderedDict[tuple[str, Hashable], QImage] = OrderedDict()
        self._latest: dict[str, Hashable] = {}

    def get(self, sid: str, variant: Hashable) -> QImage | None:
        img = self._items.get((sid, variant))
        if img is not None:
            self._items.move_to_end((sid, variant))
        return img

    def latest(self, sid: str) -> QImage | None:
        variant = self._latest.get(sid)
        return None if variant is None else self._items.get((sid, variant))

    def put(self, sid: str, variant: Hashable, img: QImage) -> None:
        key = (sid, variant)
        old = self._items.pop(key, None)
        if old is not None:
            self.bytes -= old.sizeInBytes()
        self._items[key] = img
        self._latest[sid] = variant
        self.bytes += img.sizeInBytes()
        while self.bytes > self.budget and len(self._items) > 1:
            (osid, ovar), gone = self._items.popitem(last=False)
            self.bytes -= gone.sizeInBytes()
            if self._latest.get(osid) == ovar:
                del self._latest[osid]

    def clear(self) -> None:
        self._items.clear()
        self._latest.clear()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._items)


class ThumbLoader(QObject):
    """One worker thread that draws the thumbnails the view wants, newest wish first."""

    #: (sample id, variant, QImage or None when drawing failed), on the GUI thread
    ready = Signal(str, object, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cond = threading.Condition()
        self._pending: OrderedDict[tuple[str, Hashable], Callable[[], QImage]] = OrderedDict()
        self._stop = False
        #: keys on the thread now or drawn and not yet :meth:`taken` (never asked for twice)
        self._busy: set[tuple[str, Hashable]] = set()
        self._thread: threading.Thread | None = None
        self._resume_at = 0.0  # time.monotonic() before which no thumbnail is started

    def want(self, jobs: dict[tuple[str, Hashable], Callable[[], QImage]]) -> None:
        """Draw these (in this order); whatever was pending and is not among them is dropped."""
        with self._cond:
            self._pending = OrderedDict((k, v) for k, v in jobs.items() if k not in self._busy)
            if jobs and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="masklens-thumbnails", daemon=True)
                self._thread.start()
            self._cond.notify()

    def yield_to_gui(self, ms: float = YIELD_MS) -> None:
        """An input arrived: start no thumbnail for ``ms`` (the one being drawn is finished)."""
        self._resume_at = max(self._resume_at, time.monotonic() + ms / 1000)

    def taken(self, sid: str, variant: Hashable) -> None:
        """The GUI thread has stored this thumbnail (it may be asked for again once dropped)."""
        with self._cond:
            self._busy.discard((sid, variant))

    def pending(self) -> int:
        with self._cond:
            return len(self._pending)

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._pending.clear()
            self._cond.notify()

    def _next_turn(self) -> bool:
        """Wait (holding ``_cond``) until a thumbnail is wanted and the GUI thread has had its
        turn (:meth:`yield_to_gui`, at most :data:`HELD_MAX_MS`); False: the loader stops."""
        held_since: float | None = None
        while not self._stop:
            now = time.monotonic()
            if not self._pending:
                held_since = None
                self._cond.wait()
                continue
            held_since = now if held_since is None else held_since
            wait = min(self._resume_at - now, held_since + HELD_MAX_MS / 1000 - now)
            if wait <= 0:
                return True
            self._cond.wait(wait)
        return False

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._next_turn():
                    return
                (sid, variant), job = self._pending.popitem(last=False)
                self._busy.add((sid, variant))
            try:
                with gui_friendly():  # the GUI thread gets the GIL back within 0.5 ms, not 5
                    img = job()
            except Exception:  # noqa: BLE001 - a bad sample gets a blank tile, never a crash
                log.exception("thumbnail of sample %s", sid)
                img = None
            try:
                self.ready.emit(sid, variant, img)
            except RuntimeError:  # the loader was deleted with its window
                return
