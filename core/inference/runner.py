"""Run a segmenter over a benchmark's prompts: each image read and encoded once, cached, cancellable.

:func:`run_benchmark` groups the prompts by image file, so a segmenter with an
encoding cache encodes every image once however many prompts (or samples) ask
about it. Before calling the model it looks every prompt up in the
:class:`~masklens.core.cache.predictions.PredictionCache`; what the model computes is
stored there image by image, *before* progress is reported. A run interrupted
at any point (Ctrl-C, :class:`~masklens.core.errors.Cancelled` raised by the
progress callback or a cancel check) therefore leaves every finished image in
the cache, and a re-run continues where it stopped.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from masklens.core.cache.entries import PredictionKey
from masklens.core.cache.model_cache import image_key
from masklens.core.cache.predictions import PredictionCache
from masklens.core.errors import Cancelled, DataFormatError
from masklens.core.files.images import DECODER_VERSION
from masklens.core.models.base import Segmenter, SegmentRequest, SegmentResult
from masklens.core.models.interrupt import cancel_check
from masklens.core.schema import Benchmark, ImageRef, Instance, Prediction, PredictionSet, Prompt

#: progress(done_prompts, total_prompts)
Progress = Callable[[int, int], None]
#: a cancel check: an Event (cancelled when set) or a callable returning True to stop
CancelCheck = threading.Event | Callable[[], bool] | None

#: provenance flag a backend sets on a result that means "no prediction for this prompt"
#: (e.g. replay without a recorded answer): the prompt is listed in PredictionSet.missing
MISSING_FLAG = "missing"


def load_image(path: str | Path, expected_size: tuple[int, int] | None = None) -> np.ndarray:
    """Read an image file as H×W×3 uint8 RGB through the one decoder (:func:`masklens.core.files.images.read_image`:
    EXIF orientation applied, alpha dropped, 16-bit → high byte); a missing or undecodable file -> DataFormatError.
    ``expected_size`` is the (height, width) the benchmark records for it."""
    from masklens.core.files.images import read_image

    return read_image(path, expected_size)


def resolve_image_path(
    ref: ImageRef, images_dir: str | Path | None = None, *, sample: str = "", source: Path | None = None
) -> Path:
    """Where the pixels of ``ref`` are: its own path (checked by the benchmark's loader), else
    looked up under ``images_dir`` — never outside it (masklens.core.files.paths.inside_root)."""
    from masklens.core.files.paths import candidates_under

    candidates: list[Path] = []
    if ref.path is not None:
        candidates.append(Path(ref.path))
        if images_dir is not None:
            rels = [ref.path] if not Path(ref.path).is_absolute() else []
            candidates += candidates_under(images_dir, [*rels, Path(ref.path).name])
    for c in candidates:
        if c.is_file():
            return c
    if not candidates:
        raise DataFormatError(
            f"the benchmark names no image file for image '{ref.key}'",
            path=source,
            record=f"sample {sample}" if sample else None,
            hint="pass --images DIR (the folder holding the benchmark's images)",
        )
    raise DataFormatError(
        "image file not found",
        path=candidates[-1],
        record=f"sample {sample}" if sample else None,
        hint="pass --images DIR (the folder holding the benchmark's images)",
    )


@dataclass
class RunStats:
    """What a run did: prompts answered from the cache vs. computed, images read."""

    prompts: int = 0
    cached: int = 0
    computed: int = 0
    images: int = 0
    images_read: int = 0
    seconds: float = 0.0
    model_calls: int = 0
    #: seconds the workers spent reading, segmenting and encoding results (the Ray path)
    worker_seconds: float = 0.0


@dataclass
class _ImageJob:
    path: Path
    #: the (height, width) the benchmark records for the image (the decoder's EXIF exception uses it)
    size: tuple[int, int] | None = None
    prompts: list[Prompt] = field(default_factory=list)


def is_cancelled(cancel: CancelCheck) -> bool:
    """Whether a :data:`CancelCheck` has fired (None never does)."""
    if cancel is None:
        return False
    if isinstance(cancel, threading.Event):
        return cancel.is_set()
    return bool(cancel())


def request_for(prompt: Prompt) -> SegmentRequest:
    """The model request for a prompt: text and role, and the boxes/points drawn with it (a
    prompt's ``meta["boxes"]`` / ``meta["points"]``, image pixels; the GUI's visual prompts)."""
    boxes, points = prompt.meta.get("boxes"), prompt.meta.get("points")
    return SegmentRequest(
        text=prompt.text, role=str(prompt.role),
        # meta["boxes"] holds (x0, y0, x1, y1) boxes: map() keeps their length, which mypy cannot see
        boxes=cast("list[tuple[float, float, float, float]]", [tuple(map(float, b)) for b in boxes]) if boxes else None,
        points=[(float(x), float(y), int(label)) for x, y, label in points] if points else None,
    )


def to_prediction(prompt_id: str, result: SegmentResult) -> Prediction:
    return Prediction(
        prompt_id=prompt_id,
        instances=[Instance(m, float(s)) for m, s in zip(result.masks, result.scores, strict=True)],
        presence=result.presence,
        provenance=dict(result.provenance),
    )


def key_params(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The creation options that join a prediction-cache key: all but ``device`` (it does
    not change the output) and ``weights`` (named by :func:`checkpoint_identity`)."""
    return {k: v for k, v in (options or {}).items() if k not in ("device", "weights")}


def checkpoint_identity(segmenter: Segmenter, options: Mapping[str, Any] | None = None) -> str:
    """What identifies a segmenter's weights for the prediction cache, without loading them.

    A backend may expose ``cache_identity() -> str`` (e.g. a checkpoint content
    hash or a Hugging Face revision); otherwise the weights option (or the
    backend's default checkpoint) names them.
    """
    fn = getattr(segmenter, "cache_identity", None)
    if callable(fn):
        ident = fn()
        if ident:
            return str(ident)
    weights = (options or {}).get("weights") or getattr(segmenter.info, "default_weights", None)
    return str(weights or "")


def segment_cached(
    segmenter: Segmenter,
    image: np.ndarray,
    request: SegmentRequest,
    *,
    cache: PredictionCache | None,
    backend: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> tuple[SegmentResult, bool]:
    """One prompt through the prediction cache (for live prompts in the GUI):
    returns the result and whether it came from the cache."""
    if cache is None or not getattr(segmenter, "cacheable", True):
        return segmenter.segment(image, request), False
    opts = dict(options or {})
    name = backend or segmenter.info.name
    key = PredictionKey.for_request(
        name, checkpoint_identity(segmenter, opts), image_key(image), request, key_params(opts)
    )
    hit = cache.get(key)
    if hit is not None:
        return hit, True
    result = segmenter.segment(image, request)
    if not result.provenance.get(MISSING_FLAG):
        cache.put(key, result)
    return result, False


def plan_images(
    benchmark: Benchmark, images_dir: str | Path | None = None
) -> list[_ImageJob]:
    """Prompts grouped by the image file they are asked on, in benchmark order."""
    jobs: dict[Path, _ImageJob] = {}
    source = next(iter(benchmark.sources.values()), None)
    for sample in benchmark.samples:
        for prompt in sample.prompts:
            ref = sample.images.get(prompt.image)
            if ref is None:
                raise DataFormatError(
                    f"prompt '{prompt.id}' refers to image '{prompt.image}' that the sample lacks",
                    record=f"sample {sample.id}",
                )
            path = resolve_image_path(ref, images_dir, sample=sample.id, source=source).resolve()
            jobs.setdefault(path, _ImageJob(path, (ref.height, ref.width))).prompts.append(prompt)
    return list(jobs.values())


def run_benchmark(
    segmenter: Segmenter,
    benchmark: Benchmark,
    *,
    backend: str | None = None,
    options: Mapping[str, Any] | None = None,
    cache: PredictionCache | None = None,
    images_dir: str | Path | None = None,
    progress: Progress | None = None,
    cancel: CancelCheck = None,
    image_loader: Callable[[Path], np.ndarray] | None = None,
    stats: RunStats | None = None,
) -> PredictionSet:
    """Answer every prompt of ``benchmark`` with ``segmenter``; returns a PredictionSet.

    Segmenters with ``cacheable = False`` (replay) bypass the cache.
    ``options`` are the options the segmenter was created with; those that change
    its output (everything but ``device``) join the cache key, with the checkpoint
    identity (:func:`checkpoint_identity`). ``cache=None`` disables caching.
    ``progress(done, total)`` is called after each image (and once at the start);
    it may raise :class:`Cancelled`/KeyboardInterrupt to stop. ``cancel`` is
    checked before each image; when it fires, :class:`Cancelled` is raised. ``image_loader``
    replaces :func:`load_image` (which also gets the size the benchmark records for the image).
    """
    t0 = time.perf_counter()
    if not getattr(segmenter, "cacheable", True):  # e.g. replay: already a file of answers
        cache = None
    stats = stats if stats is not None else RunStats()
    name = backend or segmenter.info.name
    opts = dict(options or {})
    params = key_params(opts)
    ckpt = checkpoint_identity(segmenter, opts) if cache is not None else ""
    jobs = plan_images(benchmark, images_dir)
    total = sum(len(j.prompts) for j in jobs)
    stats.prompts, stats.images = total, len(jobs)
    out = PredictionSet(name=name, provenance={"model": name, **opts})
    done = 0
    if progress is not None:
        progress(0, total)
    for job in jobs:
        if is_cancelled(cancel):
            raise Cancelled(f"cancelled after {done} of {total} prompts")
        image, ikey, todo = answer_from_cache(
            job, out, cache=cache, backend=name, checkpoint=ckpt, params=params,
            image_loader=image_loader, stats=stats,
        )
        if todo:
            if image is None:
                image = _load(image_loader, job)
                stats.images_read += 1
            with cancel_check(_raiser(cancel, done, total)):  # Cancel acts mid-forward too
                results = segment_image(segmenter, image, [request_for(p) for p in todo], backend=name)
            stats.model_calls += 1
            store_computed(out, todo, results, cache=cache, keys=cache_keys(
                todo, backend=name, checkpoint=ckpt, image=ikey, params=params) if cache else None)
            stats.computed += len(todo)
        done += len(job.prompts)
        if progress is not None:
            progress(done, total)
    stats.seconds = time.perf_counter() - t0
    return out


def _raiser(cancel: CancelCheck, done: int, total: int) -> Callable[[], None] | None:
    """A check for :func:`~masklens.core.models.interrupt.cancel_check` that raises Cancelled
    once ``cancel`` fires (None without a cancel check)."""
    if cancel is None:
        return None

    def check() -> None:
        if is_cancelled(cancel):
            raise Cancelled(f"cancelled after {done} of {total} prompts")

    return check


#: prefix of a remembered file -> image key: a key remembered under another decoding policy
#: (other pixels for EXIF-rotated or 16-bit files) is not reused
_DECODER_TAG = f"d{DECODER_VERSION}:"


def _remembered_key(cache: PredictionCache, path: Path) -> str:
    remembered = cache.file_image_key(path) or ""
    return remembered[len(_DECODER_TAG):] if remembered.startswith(_DECODER_TAG) else ""


def remember_image_key(cache: PredictionCache, path: str | Path, key: str) -> None:
    """Remember the content key of the image file at ``path`` under the current decoder."""
    cache.remember_file_image_key(path, f"{_DECODER_TAG}{key}")


def _load(image_loader: Callable[[Path], np.ndarray] | None, job: _ImageJob) -> np.ndarray:
    image = load_image(job.path, job.size) if image_loader is None else image_loader(job.path)
    if job.size is not None and tuple(image.shape[:2]) != tuple(job.size):
        warn_size_differs(job.path, tuple(image.shape[:2]), tuple(job.size))
    return image


_size_warned = False


def warn_size_differs(path: Path, got: tuple[int, ...], want: tuple[int, ...]) -> None:
    """Say (on stderr once per process, in the log each time) that an image's pixels differ in
    size from what the annotation records: its masks will not line up with the predictions."""
    global _size_warned
    msg = (f"{path}: the image is {got[0]} × {got[1]} pixels but the annotation records "
           f"{want[0]} × {want[1]}; predictions are made at the image's size")
    logging.getLogger("masklens").info(msg)
    if not _size_warned:
        _size_warned = True
        print(f"masklens: warning: {msg} (further such images: in the log)", file=sys.stderr)


def cache_keys(
    prompts: list[Prompt], *, backend: str, checkpoint: str, image: str, params: Mapping[str, Any]
) -> list[PredictionKey]:
    """The prediction-cache keys of prompts asked on the image with content key ``image``."""
    return [PredictionKey.for_request(backend, checkpoint, image, request_for(p), params) for p in prompts]


def answer_from_cache(
    job: _ImageJob,
    out: PredictionSet,
    *,
    cache: PredictionCache | None,
    backend: str,
    checkpoint: str,
    params: Mapping[str, Any],
    image_loader: Callable[[Path], np.ndarray] | None = None,
    read: bool = True,
    stats: RunStats,
) -> tuple[np.ndarray | None, str, list[Prompt]]:
    """Answer the prompts of ``job`` that the cache holds (into ``out``); returns the image (when
    it had to be read to hash it), its content key ("" when unknown) and the prompts left to compute.

    With ``read=False`` an image whose key the cache does not remember is not read: its key stays
    "" and every prompt is left to compute (the distributed path hashes it on a worker).
    ``image_loader``: as in :func:`run_benchmark` (None: the one decoder, :func:`load_image`).
    """
    if cache is None:
        return None, "", list(job.prompts)
    image: np.ndarray | None = None
    ikey = _remembered_key(cache, job.path)
    if not ikey:
        if not read:
            return None, "", list(job.prompts)
        image = _load(image_loader, job)
        stats.images_read += 1
        ikey = image_key(image)
        remember_image_key(cache, job.path, ikey)
    keys = cache_keys(job.prompts, backend=backend, checkpoint=checkpoint, image=ikey, params=params)
    hits = cache.get_many(keys)
    todo: list[Prompt] = []
    for prompt, key in zip(job.prompts, keys, strict=True):
        hit = hits.get(key.digest)
        if hit is not None:
            _store(out, prompt, hit)
            stats.cached += 1
        else:
            todo.append(prompt)
    return image, ikey, todo


def segment_image(
    segmenter: Segmenter, image: np.ndarray, requests: list[SegmentRequest], *, backend: str
) -> list[SegmentResult]:
    """Every request on one image in one ``segment_many`` call (one encoding): the model work of
    one image, shared by the single-process and the distributed paths."""
    results = segmenter.segment_many(image, requests)
    if len(results) != len(requests):
        raise RuntimeError(f"{backend}: segment_many returned {len(results)} results for {len(requests)} requests")
    return results


def store_computed(
    out: PredictionSet,
    prompts: list[Prompt],
    results: list[SegmentResult],
    *,
    cache: PredictionCache | None,
    keys: list[PredictionKey] | None,
) -> None:
    """Put freshly computed results into the cache (before anything is reported) and into ``out``."""
    if cache is not None and keys is not None:
        cache.put_many(
            (k, res) for k, res in zip(keys, results, strict=True) if not res.provenance.get(MISSING_FLAG)
        )
    for prompt, res in zip(prompts, results, strict=True):
        _store(out, prompt, res)


def _store(out: PredictionSet, prompt: Prompt, result: SegmentResult) -> None:
    if result.provenance.get(MISSING_FLAG):
        out.by_prompt.pop(prompt.id, None)
        out.missing.add(prompt.id)
    else:
        out.add(to_prediction(prompt.id, result))
