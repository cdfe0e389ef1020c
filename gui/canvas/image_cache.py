"""Lazy image and mask decoding with byte-bounded LRU caches (nothing is loaded up front); the
caches are shared with the image prefetcher's thread (:mod:`masklens.gui.jobs.prefetch`)."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import numpy as np

from masklens.core.errors import DataFormatError
from masklens.core.masks import Mask
from masklens.core.schema import ImageRef


class ByteLRU:
    """An LRU of numpy arrays bounded by total bytes, safe to share between threads.

    A value is made outside the lock (decoding releases the GIL); a thread that asks for a key
    another thread is making waits for that value instead of making it again (the GUI thread
    takes an image the prefetcher is decoding when it is done, never decodes it a second time).
    """

    def __init__(self, budget_bytes: int) -> None:
        self.budget = budget_bytes
        self._items: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._making: dict[Hashable, threading.Event] = {}  # keys being made, by any thread

    def get(self, key: Hashable, make: Callable[[], np.ndarray]) -> np.ndarray:
        while True:
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    return self._items[key]
                made_elsewhere = self._making.get(key)
                if made_elsewhere is None:
                    done = self._making[key] = threading.Event()
                    break
            made_elsewhere.wait()  # then take it (or, if making it failed there, make it here)
        try:
            value = make()
        except BaseException:
            with self._lock:
                del self._making[key]
            done.set()
            raise
        with self._lock:
            del self._making[key]
            self._items[key] = value
            self._bytes += value.nbytes
            while self._bytes > self.budget and len(self._items) > 1:
                _, old = self._items.popitem(last=False)
                self._bytes -= old.nbytes
        done.set()
        return value

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._items

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    @property
    def nbytes(self) -> int:
        """The bytes held now (at most the budget, or one value larger than it)."""
        with self._lock:
            return self._bytes

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


def read_rgb(path: Path, expected_size: tuple[int, int] | None = None) -> np.ndarray:
    """Decode an image file to H×W×3 uint8 RGB with the one decoder the models and reports use
    (:func:`masklens.core.files.images.read_image`); a missing or undecodable file is a DataFormatError."""
    from masklens.core.files.images import read_image

    return read_image(path, expected_size)


def placeholder(height: int, width: int) -> np.ndarray:
    """A neutral checkerboard for images whose file is not available (scoring needs no pixels)."""
    yy, xx = np.ogrid[:height, :width]
    board = (((yy // 32) + (xx // 32)) % 2).astype(np.uint8)
    out = np.empty((height, width, 3), dtype=np.uint8)
    out[...] = (70 + 20 * board)[..., None]
    return out


class ImageStore:
    """Decoded images and masks on demand, each kept in a byte-bounded LRU. The masks' budget holds
    what the Compare tab draws for three 100-mask model results on an 1800×1200 photograph (2.2 MB
    a mask): with less, every redraw decoded them again on the GUI thread (seconds)."""

    def __init__(self, image_budget: int = 768 << 20, mask_budget: int = 768 << 20) -> None:
        self.images = ByteLRU(image_budget)
        self.masks = ByteLRU(mask_budget)
        self.missing: dict[str, str] = {}  # image path -> why it is shown as a placeholder
        # id(array) -> (array, bounding box); holding the array keeps its id from being reused
        self._boxes: OrderedDict[int, tuple[np.ndarray, tuple[int, int, int, int] | None]] = OrderedDict()
        self._boxes_lock = threading.Lock()  # a prompt job fills it too (gui/canvas/prepared.py)
        from masklens.gui.canvas.prepared import PreparedLayers

        #: overlays of new model results made in their job, off the GUI thread
        self.prepared = PreparedLayers()

    def image(self, ref: ImageRef) -> np.ndarray:
        """The image's pixels, or a placeholder (recorded in ``missing``) when it cannot be read."""

        def make() -> np.ndarray:
            if ref.path is None:
                return placeholder(ref.height, ref.width)
            try:
                return read_rgb(Path(ref.path), (ref.height, ref.width))
            except DataFormatError as exc:
                self.missing[str(ref.path)] = str(exc)
                return placeholder(ref.height, ref.width)

        return self.images.get(self.image_key(ref), make)

    @staticmethod
    def image_key(ref: ImageRef) -> tuple[Any, ...]:
        return ("img", ref.key, str(ref.path), ref.height, ref.width)

    def has_image(self, ref: ImageRef) -> bool:
        """Whether ``ref``'s pixels (or its placeholder) are decoded already."""
        return self.image_key(ref) in self.images

    def why_missing(self, ref: ImageRef, sample_id: str = "") -> str | None:
        """Why ``ref`` is drawn as a placeholder, naming the file (None when its pixels were read):
        an unreadable file's message with its absolute path, or that the benchmark gives no file."""
        if ref.path is None:
            which = f"image '{ref.key}'" + (f" (image id {ref.source_id})" if ref.source_id is not None else "")
            of = f"sample {sample_id}: " if sample_id else ""
            return (f"{of}{which} has no file: opened without its images folder, or the file is in none "
                    "of the folders looked in — choose the folder in File › Open benchmark (--images DIR)")
        why = self.missing.get(str(ref.path))
        if why is None:
            return None
        where = os.path.normpath(os.path.abspath(ref.path))
        given = str(ref.path)
        if where not in why:  # a relative path (e.g. ../images): the file it resolved to comes first
            first, _, rest = why.partition("\n")
            first = f"{where}{first[len(given):]}" if first.startswith(given) else f"{first} ({where})"
            why = f"{first} (given as {given})" + (f"\n{rest}" if rest else "")
        return why

    def rgb_for_model(self, ref: ImageRef) -> np.ndarray:
        """The image's real pixels for a model; raises DataFormatError when there are none."""
        if ref.path is None:
            raise DataFormatError(
                f"image '{ref.key}' has no file; open the benchmark with its images folder to run models"
            )
        if str(ref.path) in self.missing:
            raise DataFormatError(self.missing[str(ref.path)])
        path = Path(ref.path)
        return self.images.get(self.image_key(ref), lambda: read_rgb(path, (ref.height, ref.width)))

    def mask(self, mask: Mask, height: int | None = None, width: int | None = None) -> np.ndarray:
        """A mask decoded to bool at (height, width) (nearest-neighbour resized when it differs)."""
        h, w = height or mask.height, width or mask.width
        # pycocotools decodes column-major; keep a C-contiguous copy (fast row slicing, cv2, views)
        return self.masks.get(self._mask_key(mask, h, w), lambda: mask.resized(h, w).to_array_c())

    def has_mask(self, mask: Mask, height: int | None = None, width: int | None = None) -> bool:
        """Whether :meth:`mask` would find it decoded already."""
        return self._mask_key(mask, height or mask.height, width or mask.width) in self.masks

    @staticmethod
    def _mask_key(mask: Mask, height: int, width: int) -> tuple[Any, ...]:
        return ("mask", mask.shape, mask.rle["counts"], height, width)

    def box(self, array: np.ndarray) -> tuple[int, int, int, int] | None:
        """Bounding box (x0, y0, x1, y1) of a decoded mask, memoised (None when empty)."""
        from masklens.gui.canvas.overlays import bbox

        with self._boxes_lock:
            hit = self._boxes.get(id(array))
            if hit is not None and hit[0] is array:
                self._boxes.move_to_end(id(array))
                return hit[1]
        value = bbox(array)
        with self._boxes_lock:
            self._boxes[id(array)] = (array, value)
            if len(self._boxes) > 4096:
                self._boxes.popitem(last=False)
        return value
