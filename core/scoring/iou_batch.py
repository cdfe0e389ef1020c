"""IoU of many small (predictions × ground truths) jobs in few pycocotools calls, exactly.

Scoring a benchmark asks :func:`~masklens.core.masks.iou_matrix` once per sample for a few
masks; at tens of thousands of samples the fixed cost of each ``maskUtils.iou`` call (list
checks, RLE objects, result array) is a large part of the time. :func:`iou_jobs` puts
``BLOCK`` jobs into one call and reads each job's own sub-matrix back: every value equals the
job's own ``iou_matrix`` call, bit for bit.

Why that is exact. ``maskUtils.iou`` (pycocotools ``rleIou``) computes, for each (dt, gt)
pair, the boxes' IoU first (``rleToBbox`` + ``bbIou``); where it is positive and the two RLEs
have the same declared (height, width) it merges the runs and returns ``i / u`` (0 when
``i = 0``), where the sizes differ it returns -1, elsewhere 0. Each job's masks are given the
declared size (h, W + k): h its true height, W the largest true width in the block, k the
job's index in the block. Within a job the sizes agree, so each pair is treated exactly as in
the job's own call; across jobs they differ, so a pair is never merged (-1 or 0, and never
read). The declared width enters ``rleToBbox`` only as the initial left edge, which every
non-empty foreground run replaces (x ≤ w - 1 < W + k), so the box of a mask with foreground
is its true box; a mask without foreground intersects nothing (IoU 0 both ways). The runs
themselves are untouched.

A large batch (:data:`PARALLEL_JOBS`) computes part of its blocks in a worker process
(:mod:`masklens.core.runtime.worker_processes`, :class:`BlockWorker`): the worker is handed
runs of blocks — their inputs to pycocotools, declared sizes and counts — while the jobs are
still being added and while this process computes blocks from the other end, runs the same
:func:`block_values`, and answers each run's values, which are placed as this process places
its own. Where no worker can run or it fails, its blocks are computed here: the values are the
same either way.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import weakref
from collections.abc import Sequence
from queue import SimpleQueue
from threading import Thread

import numpy as np
from pycocotools import mask as mask_utils

from masklens.core.masks import Mask, iou_matrix
from masklens.core.runtime.worker_processes import (
    reply,
    requests,
    start_worker,
    stop,
    workers_available,
)

#: jobs per pycocotools call: the box pre-check costs (masks in block) × (ground truths in
#: block), the call's fixed cost is paid once per block
BLOCK = 16

#: jobs a caller expects from which :class:`IouJobs` computes part of its blocks in a worker
#: process; below it, waiting for the worker's start (about 0.15 s) costs more than it saves
#: (SA-Co/Gold-like entries break even at about 20,000)
PARALLEL_JOBS = 30_000

#: blocks handed to the worker at once (at SA-Co/Gold's sizes about 20 ms of its work)
RUN = 32

#: runs handed to the worker and not yet answered, at most (it is never idle, and the blocks
#: left here are computed here)
AHEAD = 2

#: the pipe to the worker holds this much (a run's input is about 300 KB), so that handing a
#: run over is one write
PIPE_BYTES = 1 << 20

#: a block's input to one pycocotools call: each job's declared (height, width), predictions'
#: counts and ground truths' counts
BlockInput = tuple[list[list[int]], list[list[bytes]], list[list[bytes]]]


def block_values(declared: list[list[int]], dts_of: list[list[bytes]],
                 gts_of: list[list[bytes]]) -> np.ndarray:  # fmt: skip
    """One pycocotools call for a block of jobs: every job's (predictions × ground truths)
    IoUs row-major, job after job (``declared``: each job's declared size, see the module)."""
    dts = [{"size": d, "counts": c} for d, cs in zip(declared, dts_of) for c in cs]  # noqa: B905
    gts = [{"size": d, "counts": c} for d, cs in zip(declared, gts_of) for c in cs]  # noqa: B905
    mat = np.asarray(mask_utils.iou(dts, gts, [0] * len(gts)), dtype=np.float64)
    mat = mat.reshape(len(dts), len(gts))
    if len(declared) == 1:
        return mat.ravel()
    nr = [len(d) for d in dts_of]
    if all(len(g) == 1 for g in gts_of):  # one ground truth per job: its column, row by row
        k = len(declared)
        return mat.ravel()[np.arange(len(dts)) * k + np.repeat(np.arange(k), nr)]
    parts = []
    r = c = 0
    for a, g in zip(nr, gts_of, strict=True):
        parts.append(mat[r : r + a, c : c + len(g)].ravel())
        r, c = r + a, c + len(g)
    return np.concatenate(parts)


def blocks_values(blocks: Sequence[BlockInput]) -> np.ndarray:
    """:func:`block_values` of every block, one after the other."""
    return np.concatenate([np.zeros(0), *(block_values(*b) for b in blocks)])


class BlockWorker:
    """A worker process computing runs of blocks as they are handed to it. A thread pickles
    each run to it (handing one over never waits for the worker) and a thread reads its answers
    — each run's :func:`block_values`, one after another — as they come."""

    def __init__(self) -> None:
        self.process = start_worker(__name__, stdin=True)
        assert self.process.stdin is not None, "start_worker(…, stdin=True) pipes the standard input"
        with contextlib.suppress(ImportError, AttributeError, OSError):  # (Linux) a run fits in the pipe
            import fcntl

            fcntl.fcntl(self.process.stdin.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        self.handed: list[list[list[int]]] = []  # each run's blocks (job indices), in order
        self.answers: list[np.ndarray] = []  # each run's values, in the order handed
        self._outbox: SimpleQueue[list[BlockInput] | None] = SimpleQueue()
        self._threads = [Thread(target=self._write, daemon=True), Thread(target=self._read, daemon=True)]
        for thread in self._threads:
            thread.start()

    @property
    def waiting(self) -> int:
        """Runs handed over and not yet answered."""
        return len(self.handed) - len(self.answers)

    def hand(self, blocks: list[list[int]], inputs: list[BlockInput]) -> None:
        self.handed.append(blocks)
        self._outbox.put(inputs)

    def finish(self) -> list[np.ndarray]:
        """The answers, once the worker has answered every run it could (a worker that
        failed answers fewer); the worker has then ended."""
        self._outbox.put(None)
        for thread in self._threads:
            thread.join()
        stop(self.process)
        return self.answers

    def close(self) -> None:
        """End the worker without waiting for its answers."""
        self._outbox.put(None)
        stop(self.process)
        for thread in self._threads:
            thread.join()

    def _write(self) -> None:
        pipe = self.process.stdin
        assert pipe is not None, "start_worker(…, stdin=True) pipes the standard input"
        try:
            while (inputs := self._outbox.get()) is not None:
                data = pickle.dumps(inputs, protocol=pickle.HIGHEST_PROTOCOL)
                pipe.write(data)  # (the GIL is let go while the pipe takes it)
                pipe.flush()
        except (OSError, ValueError):  # the worker has ended (a broken or closed pipe)
            pass
        with contextlib.suppress(OSError):
            pipe.close()

    def _read(self) -> None:
        pipe = self.process.stdout
        assert pipe is not None, "start_worker pipes the standard output"
        try:
            while True:
                values = pickle.load(pipe)
                if not (isinstance(values, np.ndarray) and values.dtype == np.float64 and values.ndim == 1):
                    return
                self.answers.append(values)
        except (EOFError, OSError, ValueError, pickle.UnpicklingError, TypeError, AttributeError, ImportError):
            return  # the worker's end (or a failure: the runs left unanswered are computed here)


class IouJobs:
    """IoU jobs collected one by one, computed together by :meth:`run`.

    A job is given as the RLE counts of its predictions and ground truths, all of one size
    (h, w) (the caller's promise: predictions resized to the ground truth's size, as
    ``iou_matrix`` wants them); :meth:`add_masks` checks sizes and routes a job with mixed
    sizes to its own ``iou_matrix`` call. ``values`` (after :meth:`run`; ``array`` as numpy) holds
    every job's (predictions × ground truths) IoUs row-major, job after job; ``at[j]`` is job
    j's first.

    ``workers``: compute part of the blocks in a worker process (True), all here (False), or
    by the number of jobs the caller ``expected`` (None: from :data:`PARALLEL_JOBS` on). The
    worker is started at once, so that it is ready when :meth:`run` sends it its blocks, and
    is ended by :meth:`run` (or when the jobs are dropped unrun).
    """

    __slots__ = ("at", "total", "values", "array", "_dts", "_gts", "_sizes", "_own", "_block", "_blocks",
                 "_kept", "_worker", "_stop_worker", "__weakref__")  # fmt: skip

    def __init__(self, *, workers: bool | None = None, expected: int = 0) -> None:
        self.at: list[int] = []
        self.total = 0
        self.values: list[float] = []
        self.array: np.ndarray | None = None
        self._dts: list[list[bytes]] = []
        self._gts: list[list[bytes]] = []
        self._sizes: list[tuple[int, int]] = []
        self._own: dict[int, tuple[Sequence[Mask], Sequence[Mask]]] = {}
        self._block: list[int] = []  # jobs of the block being filled
        self._blocks: list[list[int]] = []  # full blocks
        self._kept = 0  # blocks before it are handed to the worker; the others are left here
        self._worker: BlockWorker | None = None
        self._stop_worker: weakref.finalize | None = None
        if workers is None:
            workers = expected >= PARALLEL_JOBS
        if workers and workers_available():
            try:
                self._worker = BlockWorker()
            except OSError:  # no process to be had: every block here
                return
            self._stop_worker = weakref.finalize(self, self._worker.close)  # also when never run

    def add(self, dts: list[bytes], gts: list[bytes], h: int, w: int) -> int:
        """A job of counts, all of size (h, w); returns its index."""
        j = self._append(dts, gts, h, w)
        if dts and gts:
            self._in_block(j)
        return j

    def _append(self, dts: list[bytes], gts: list[bytes], h: int, w: int) -> int:
        at = self.at
        at.append(self.total)
        self.total += len(dts) * len(gts)
        self._dts.append(dts)
        self._gts.append(gts)
        self._sizes.append((h, w))
        return len(at) - 1

    def _in_block(self, j: int) -> None:
        """Job ``j`` (with predictions and ground truths of one size) joins a block; a full run
        of blocks goes to the worker when it is not behind."""
        block = self._block
        block.append(j)
        if len(block) == BLOCK:
            self._blocks.append(block)
            self._block = []
            worker = self._worker
            if worker is not None and len(self._blocks) - self._kept >= RUN and worker.waiting < AHEAD:
                self._hand(worker, self._kept, self._kept + RUN)

    def _hand(self, worker: BlockWorker, start: int, end: int) -> None:
        blocks = self._blocks[start:end]
        worker.hand(blocks, [self._block_input(b) for b in blocks])
        self._kept = end

    def add_masks(self, preds: Sequence[Mask], gts: Sequence[Mask]) -> int:
        """A job of masks: ``iou_matrix(preds, gts)``."""
        j = self._append([m.rle["counts"] for m in preds], [m.rle["counts"] for m in gts], 0, 0)
        if preds and gts:
            size = gts[0].rle["size"]
            h, w = size[0], size[1]
            if h > 0 and w > 0 and all(
                m.rle["size"][0] == h and m.rle["size"][1] == w for m in (*preds, *gts)
            ):
                self._sizes[j] = (h, w)
                self._in_block(j)
            else:
                self._own[j] = (preds, gts)
        return j

    def run(self, *, as_list: bool = True) -> None:
        """Compute every job; ``as_list=False`` leaves :attr:`values` empty (only :attr:`array`)."""
        try:
            self._run(self._worker)
        finally:
            self.close()
        self.values = self.array.tolist() if as_list and self.array is not None else []

    def close(self) -> None:
        """End the worker (:meth:`run` does; so must the caller of jobs that will not be run: an
        error or a cancel while adding)."""
        worker, self._worker = self._worker, None
        if self._stop_worker is not None:
            self._stop_worker.detach()
        if worker is not None:
            worker.close()

    def _run(self, worker: BlockWorker | None) -> None:
        if len(self.at) == 1 and 0 not in self._own:  # one job: one plain call
            dts, gts = self._dts[0], self._gts[0]
            if dts and gts:
                self.array = block_values([list(self._sizes[0])], [dts], [gts])
            return
        out = np.zeros(self.total, dtype=np.float64)
        blocks = self._blocks
        if self._block:
            blocks.append(self._block)
            self._block = []
        # the blocks left: the worker takes runs from the front while this process computes
        # blocks from the back, until they meet
        end = len(blocks)
        while self._kept < end:
            left = end - self._kept
            if worker is not None and worker.waiting < AHEAD and left > 2:
                self._hand(worker, self._kept, self._kept + min(RUN, left // 3))
            else:
                end -= 1
                self._place(blocks[end], block_values(*self._block_input(blocks[end])), out)
        for j, pair in self._own.items():  # (each with predictions and ground truths)
            mat = iou_matrix(*pair)
            out[self.at[j] : self.at[j] + mat.size] = mat.ravel()
        if worker is not None:
            answers = worker.finish()
            for k, run in enumerate(worker.handed):
                jobs = [j for b in run for j in b]
                values = answers[k] if k < len(answers) else None
                if values is None or values.size != sum(len(self._dts[j]) * len(self._gts[j]) for j in jobs):
                    values = blocks_values([self._block_input(b) for b in run])  # the worker failed
                self._place(jobs, values, out)
        self.array = out

    def _block_input(self, block: list[int]) -> BlockInput:
        """Each job of the block declared as (h, W + k): h its height, W the block's largest
        width, k its index in the block (see the module)."""
        sizes = self._sizes
        base = max(sizes[j][1] for j in block)
        declared = [[sizes[j][0], base + k] for k, j in enumerate(block)]
        return declared, [self._dts[j] for j in block], [self._gts[j] for j in block]

    def _place(self, jobs: list[int], values: np.ndarray, out: np.ndarray) -> None:
        """Write the jobs' values (job after job) at their places in ``out``."""
        at = self.at
        a0 = at[jobs[0]]
        if at[jobs[-1]] - a0 + len(self._dts[jobs[-1]]) * len(self._gts[jobs[-1]]) == len(values):
            out[a0 : a0 + len(values)] = values  # the jobs' values are contiguous
            return
        r = 0
        for j in jobs:
            n = len(self._dts[j]) * len(self._gts[j])
            out[at[j] : at[j] + n] = values[r : r + n]
            r += n


def iou_jobs(jobs: Sequence[tuple[Sequence[Mask], Sequence[Mask]]]) -> np.ndarray:
    """Every job's ``iou_matrix(preds, gts).ravel()``, job after job, in few pycocotools calls."""
    batch = IouJobs()
    for preds, gts in jobs:
        batch.add_masks(preds, gts)
    batch.run()
    return np.array(batch.values, dtype=np.float64)


if __name__ == "__main__":  # a BlockWorker: python -m … (runs of blocks on its standard input)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl+C is the asking process' to answer
    for run in requests():
        reply(blocks_values(run))
    os._exit(0)  # every run answered: its input is not torn down object by object
