"""SA-Co/Gold's annotator files as :func:`~masklens.core.kinds.pcs.kind.load_pcs` reads them:
each image entry's size, ``is_instance_exhaustive`` flag and ground truth.

:class:`AnnotatorFile` reads a file in this process. For a large subset every file is read in
a worker process of its own (:mod:`masklens.core.runtime.worker_processes`): a worker reads
the file exactly as :class:`AnnotatorFile` does and hands back its :class:`AnnotatorColumns`
— the entries' names, texts, sizes and flags, and every mask's RLE counts in one byte string —
from which this process builds the same ground truths. A file in which nothing has a problem
is read as columns (here or in a worker); for any other file (or any failure of a worker) the
file is read here as an :class:`AnnotatorFile`, entry by entry, so every error is the plain
reading's, in the same order."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from pathlib import Path
from typing import Any

import numpy as np

from masklens.core.errors import MasklensError
from masklens.core.files import limits
from masklens.core.kinds.common.cgf1.io import checked_masks, entry_gt, exhaustive
from masklens.core.kinds.common.coco import CocoDataset, load_coco
from masklens.core.masks import Mask
from masklens.core.runtime.gc_pause import gc_paused
from masklens.core.runtime.worker_processes import (
    answer_in,
    reply,
    start_worker_answering_in,
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

    @property
    def title(self) -> str:
        return self.dataset.title

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

    def columns(self) -> AnnotatorColumns | None:
        """The file's entries as :class:`AnnotatorColumns` — each one's flag and
        :func:`entry_gt` — or None when any of them has a problem (its own reading reports it)."""
        ids: list[Any] = []
        file_names: list[str | None] = []
        texts: list[Any] = []
        heights: list[int] = []
        widths: list[int] = []
        flags: list[bool] = []
        n_annotations: list[int] = []
        masks: list[Mask] = []
        crowd: list[bool] = []
        categories: list[Any] = []
        annotations, built = self.dataset.annotations, self._masks
        for image_id, img in self.dataset.images.items():
            flag = img.raw.get("is_instance_exhaustive", True)
            if type(flag) is not bool:
                if not (isinstance(flag, bool) or flag in (0, 1)):  # as exhaustive()
                    return None
                flag = bool(flag)
            h, w = img.height, img.width
            anns = annotations.get(image_id, ())
            if anns:
                entry_masks = built.get(image_id)
                if entry_masks is None:
                    return None
                for ann, m in zip(anns, entry_masks, strict=True):
                    c = ann.get("iscrowd", 0)
                    if not (isinstance(c, bool) or c in (0, 1)):  # as entry_gt()
                        return None
                    if m is None:  # not a compressed RLE of the batch check (a polygon, …)
                        try:
                            m = self.dataset.mask_of(ann)
                        except MasklensError:
                            return None
                    if m.height != h or m.width != w:
                        return None
                    masks.append(m)
                    crowd.append(bool(c))
                    categories.append(ann.get("category_id"))
            ids.append(image_id)
            file_names.append(img.file_name)
            texts.append(img.raw.get("text_input"))
            heights.append(h)
            widths.append(w)
            flags.append(flag)
            n_annotations.append(len(anns))
        return AnnotatorColumns(self.path, self.title, ids, file_names, texts, heights, widths, flags, n_annotations,
                                masks, crowd, categories)  # fmt: skip


@dataclass(eq=False)
class AnnotatorColumns:
    """An annotator file in which nothing has a problem, column by column: its title; per image
    entry (file order) its id, file name, ``text_input`` (None where absent), size, flag and
    annotation count; per annotation (entry after entry,
    each entry's in file order) its mask, crowd flag and category. The ground truths are built
    from it in bulk (:meth:`ground_truths`) or one entry at a time (:meth:`ground_truth`)."""

    path: Path
    title: str
    ids: list[Any]
    file_names: list[str | None]
    texts: list[Any]
    heights: list[int]
    widths: list[int]
    flags: list[bool]
    n_annotations: list[int]
    masks: list[Mask]
    crowd: list[bool]
    categories: list[Any]

    def __post_init__(self) -> None:
        self._first: list[int] = list(accumulate(self.n_annotations, initial=0))

    @cached_property
    def _index(self) -> dict[Any, int]:
        """Each entry's position (the entry-by-entry reading's lookups only)."""
        return {image_id: i for i, image_id in enumerate(self.ids)}

    def image_ids(self) -> list[Any]:
        return self.ids

    def _at(self, image_id: Any) -> int:
        return self._index[image_id]

    def has_image(self, image_id: Any) -> bool:
        return image_id in self._index

    def size(self, image_id: Any) -> tuple[int, int]:
        i = self._at(image_id)
        return self.heights[i], self.widths[i]

    def exhaustive(self, image_id: Any) -> bool:
        return self.flags[self._at(image_id)]

    def ground_truth(self, image_id: Any, key: str, label: str | None) -> GroundTruth:
        """The entry's :func:`entry_gt`."""
        i = self._at(image_id)
        a, b = self._first[i], self._first[i + 1]
        return GroundTruth(key, self.masks[a:b], self.heights[i], self.widths[i], label=label,
                           crowd=self.crowd[a:b], meta={"file": str(self.path), "category_ids": self.categories[a:b]})

    def ground_truths(self, key: str, labels: Sequence[str | None]) -> list[GroundTruth]:
        """Every entry's :func:`entry_gt`, in file order (``labels``: one per entry)."""
        file = str(self.path)
        masks, crowd, categories, first = self.masks, self.crowd, self.categories, self._first
        return [GroundTruth(key, masks[a:b], h, w, label, crowd[a:b], {"file": file, "category_ids": categories[a:b]})
                for a, b, h, w, label in zip(first, first[1:], self.heights, self.widths, labels)]  # noqa: B905

    def packed(self) -> tuple[Any, ...]:
        """The columns as a worker hands them back (:meth:`unpacked`): the masks' counts in
        one byte string and their lengths, the crowd flags as bytes."""
        counts = [m.counts for m in self.masks]
        lengths = np.fromiter(map(len, counts), dtype=np.int64, count=len(counts))
        return (self.path, self.title, self.ids, self.file_names, self.texts, self.heights, self.widths,
                self.flags, self.n_annotations, b"".join(counts), lengths, bytes(self.crowd), self.categories)  # fmt: skip

    @classmethod
    def unpacked(cls, path: Path, title: str, ids: list[Any], file_names: list[str | None], texts: list[Any],
                 heights: list[int], widths: list[int], flags: list[bool], n_annotations: list[int], counts: bytes,
                 lengths: np.ndarray, crowd: bytes, categories: list[Any]) -> AnnotatorColumns:  # fmt: skip
        """The columns of :meth:`packed`; each mask's size is its entry's (one ``[h, w]`` list
        per size)."""
        shared: dict[tuple[int, int], list[int]] = {}
        sizes = [shared.setdefault((h, w), [h, w]) for h, w in zip(heights, widths)]  # noqa: B905
        per_mask = [s for s, n in zip(sizes, n_annotations) for _ in range(n)]  # noqa: B905
        ends = np.cumsum(lengths).tolist()
        masks = [Mask({"size": s, "counts": counts[a:b]}) for s, a, b in zip(per_mask, [0, *ends], ends)]  # noqa: B905
        return cls(path, title, ids, file_names, texts, heights, widths, flags, n_annotations, masks,
                   [c == 1 for c in crowd], categories)  # fmt: skip


Annotator = AnnotatorFile | AnnotatorColumns


@gc_paused()
def _packed_columns(path: str) -> tuple[Any, ...] | None:
    """(In a worker.) :meth:`AnnotatorColumns.packed` of the file; None when anything has a
    problem (the asking process reads the file again and reports it)."""
    try:
        found = AnnotatorFile(path).columns()
    except MasklensError:
        return None
    return None if found is None else found.packed()


def _read(path: str | os.PathLike[str]) -> Annotator:
    plain = AnnotatorFile(path)
    return plain.columns() or plain


def read_annotators(paths: Sequence[str | os.PathLike[str]], *, workers: bool | None = None) -> list[Annotator]:
    """Every annotator file in order: its columns, or the file itself when something in it has
    a problem. ``workers``: read the files in worker processes (True), in this process (False),
    or by the subset's size (None: :data:`PARALLEL_BYTES`); this process then holds no file's
    text, and its threads (the window's) are not held up parsing it."""
    if workers is None:
        workers = len(paths) > 1 and _total_bytes(paths) >= PARALLEL_BYTES
    if not workers or not workers_available():
        return [_read(p) for p in paths]
    with ExitStack() as cleanup:
        started = []
        answers = []
        for p in paths:
            try:  # each answer goes to a file without a name (tens of MB: read at memory speed)
                file = cleanup.enter_context(tempfile.TemporaryFile(prefix="masklens-annotators-"))
                worker = start_worker_answering_in(file, __name__, os.fspath(p), env=limits.environment())
            except OSError:  # no temporary file or no process to be had: read here
                break
            answers.append(file)
            started.append(worker)
            cleanup.callback(stop, worker)
        out: list[Annotator] = []
        for k, p in enumerate(paths):
            fields = answer_in(started[k], answers[k]) if k < len(started) else None
            out.append(AnnotatorColumns.unpacked(*fields) if fields is not None else _read(p))
        return out


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
    reply(_packed_columns(sys.argv[1]))
    os._exit(0)  # the answer is out: freeing the parsed file at exit would only delay its end
