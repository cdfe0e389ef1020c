"""SA-Co/Gold's annotator files as :func:`~masklens.core.kinds.pcs.kind.load_pcs` reads them:
each image entry's size, ``is_instance_exhaustive`` flag and ground truth.

:class:`AnnotatorFile` reads a file in this process. For a large subset the second and third
files are read in worker processes (:mod:`masklens.core.runtime.worker_processes`) while this
one reads the first: a worker reads the file exactly as :class:`AnnotatorFile` does and hands
back an :class:`AnnotatorDigest` — the entries' sizes and flags, and every mask's RLE counts in
one byte string — from which this process builds the same ground truths. A worker hands back a
digest only for a file in which nothing has a problem; for any other file (or any failure of
the worker) it hands back None and the file is read here, so every error is the plain
reading's, in the same order.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

import numpy as np

from masklens.core.errors import MasklensError
from masklens.core.files import limits
from masklens.core.kinds.common.cgf1.io import checked_masks, entry_gt, exhaustive
from masklens.core.kinds.common.coco import CocoDataset, load_coco
from masklens.core.masks import Mask
from masklens.core.runtime import config
from masklens.core.runtime.gc_pause import gc_paused
from masklens.core.runtime.worker_processes import (
    answer,
    reply,
    start_worker,
    stop,
    workers_available,
)
from masklens.core.schema import GroundTruth

#: subsets of at least this many bytes (all annotator files together) read their files in
#: worker processes; below it, starting the workers costs more than it saves
PARALLEL_BYTES = 64 << 20


class AnnotatorFile:
    """An annotator file read in this process: :func:`load_coco`, the masks of one batch RLE
    check (:func:`checked_masks`), the entries' flags and ground truth checked as they are read."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.dataset: CocoDataset = load_coco(path)
        self._masks = checked_masks(self.dataset)

    @property
    def path(self) -> Path:
        return self.dataset.path

    def image_ids(self) -> list[Any]:
        return list(self.dataset.images)

    def has_image(self, image_id: Any) -> bool:
        return image_id in self.dataset.images

    def size(self, image_id: Any) -> tuple[int, int]:
        img = self.dataset.images[image_id]
        return img.height, img.width

    def exhaustive(self, image_id: Any) -> bool:
        return exhaustive(self.dataset.images[image_id], self.dataset.path)

    def ground_truth(self, image_id: Any, key: str, label: str | None) -> GroundTruth:
        return entry_gt(self.dataset, self.dataset.images[image_id], key, label, self._masks)


@dataclass(eq=False)
class AnnotatorDigest:
    """An annotator file without a problem, as a worker hands it back: per image entry (file
    order) its id, size, flag and annotation count; per annotation (entry by entry) its RLE
    counts (``lengths`` bytes each, one after another in ``counts``), crowd flag and category."""

    path: Path
    ids: list[Any]
    heights: list[int]
    widths: list[int]
    flags: list[bool]
    n_annotations: list[int]
    counts: bytes
    lengths: np.ndarray
    crowd: bytes
    categories: list[Any]

    def __post_init__(self) -> None:
        self._index = {image_id: i for i, image_id in enumerate(self.ids)}
        ends = np.cumsum(self.lengths)
        self._ends: list[int] = ends.tolist()
        self._first: list[int] = (np.cumsum(self.n_annotations) - self.n_annotations).tolist()
        self._sizes: dict[tuple[int, int], list[int]] = {}  # equal sizes share one [h, w] list

    def image_ids(self) -> list[Any]:
        return self.ids

    def has_image(self, image_id: Any) -> bool:
        return image_id in self._index

    def size(self, image_id: Any) -> tuple[int, int]:
        i = self._index[image_id]
        return self.heights[i], self.widths[i]

    def exhaustive(self, image_id: Any) -> bool:
        return self.flags[self._index[image_id]]

    def ground_truth(self, image_id: Any, key: str, label: str | None) -> GroundTruth:
        """The entry's :func:`entry_gt`, built from the digest."""
        i = self._index[image_id]
        h, w = self.heights[i], self.widths[i]
        size = self._sizes.get((h, w))
        if size is None:
            size = self._sizes[(h, w)] = [h, w]
        first, n = self._first[i], self.n_annotations[i]
        ends, counts = self._ends, self.counts
        masks = [Mask({"size": size, "counts": counts[ends[a - 1] if a else 0 : ends[a]]})
                 for a in range(first, first + n)]  # fmt: skip
        return GroundTruth(
            key, masks, h, w, label=label, crowd=[c == 1 for c in self.crowd[first : first + n]],
            meta={"file": str(self.path), "category_ids": self.categories[first : first + n]},
        )  # fmt: skip


Annotator = AnnotatorFile | AnnotatorDigest


@gc_paused()
def digest(path: str) -> AnnotatorDigest | None:
    """(In a worker.) The file read by :class:`AnnotatorFile`, every entry's flag and ground
    truth included; None when anything has a problem (the asking process reads the file again
    and reports it)."""
    ids, heights, widths, flags, n_annotations = [], [], [], [], []
    counts: list[bytes] = []
    crowd = bytearray()
    categories: list[Any] = []
    try:
        plain = AnnotatorFile(path)
        for image_id in plain.image_ids():
            flags.append(plain.exhaustive(image_id))
            gt = plain.ground_truth(image_id, "gt", None)
            counts.extend([m.rle["counts"] for m in gt.masks])
            crowd.extend([1 if c else 0 for c in gt.crowd or ()])
            categories.extend(gt.meta["category_ids"])
            ids.append(image_id)
            heights.append(gt.height)
            widths.append(gt.width)
            n_annotations.append(len(gt.masks))
    except MasklensError:
        return None
    lengths = np.fromiter(map(len, counts), dtype=np.int64, count=len(counts))
    return AnnotatorDigest(plain.path, ids, heights, widths, flags, n_annotations, b"".join(counts), lengths,
                           bytes(crowd), categories)  # fmt: skip


def read_annotators(paths: Sequence[str | os.PathLike[str]], *, workers: bool | None = None) -> list[Annotator]:
    """Every annotator file in order. ``workers``: read the second and later files in worker
    processes (True), in this process (False), or by size (None: :data:`PARALLEL_BYTES`)."""
    if workers is None:
        workers = len(paths) > 1 and _total_bytes(paths) >= PARALLEL_BYTES
    if not workers or len(paths) < 2 or not workers_available():
        return [AnnotatorFile(p) for p in paths]
    # the limits in force here hold there (the environment beats the config file)
    env = {config.BY_NAME[name].env: str(value) for name, value in vars(limits.current()).items()}
    started = [start_worker(__name__, os.fspath(p), env=env) for p in paths[1:]]
    try:
        out: list[Annotator] = [AnnotatorFile(paths[0])]
        for p, worker in zip(paths[1:], started, strict=True):
            fields = answer(worker)
            out.append(AnnotatorDigest(*fields) if fields is not None else AnnotatorFile(p))
        return out
    finally:
        for worker in started:
            stop(worker)


def _total_bytes(paths: Sequence[str | os.PathLike[str]]) -> int:
    total = 0
    for p in paths:
        try:
            total += os.stat(p).st_size
        except OSError:  # the reading reports it
            return 0
    return total


if __name__ == "__main__":  # a worker of read_annotators: python -m … PATH
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl+C is the asking process' to answer
    found = digest(sys.argv[1])
    reply(None if found is None else tuple(getattr(found, f.name) for f in dataclass_fields(found)))
