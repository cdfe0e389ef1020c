"""Torch runtime for the model backends: image intake, the shared backend base classes
(:class:`TorchSegmenter`, :class:`HfSegmenter`) and the small conversions every backend shares.
Device and dtype choice live in :mod:`masklens.core.models.torch_device`.

Nothing here imports torch at module import time; every function that needs it imports it lazily.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from masklens.core.errors import ModelError
from masklens.core.masks import Mask
from masklens.core.models.base import Segmenter, SegmentRequest, SegmentResult
from masklens.core.models.torch_device import (
    Runtime,
    Stopwatch,
    free_accelerator_memory,
    heavy_imports,
    import_torch,
    tensor_nbytes,
)
from masklens.core.models.weights import ResolvedWeights, load_hf_pair, resolve_weights


def as_rgb_image(image: np.ndarray | str | Path) -> np.ndarray:
    """An H×W×3 uint8 RGB array from an array or an image file (decoded by
    :func:`masklens.core.files.images.read_image`); a clear ModelError otherwise."""
    if isinstance(image, (str, Path)):
        from masklens.core.errors import DataFormatError
        from masklens.core.files.images import read_image

        try:
            return read_image(image)  # the one decoder (EXIF applied, alpha dropped, 16-bit -> high byte)
        except DataFormatError as exc:
            raise ModelError(exc.detail, path=exc.path, hint=exc.hint) from exc
    array = np.asarray(image)
    if array.ndim == 2:
        array = np.repeat(array[:, :, None], 3, axis=2)
    if array.ndim != 3 or array.shape[2] not in (3, 4) or array.shape[0] == 0 or array.shape[1] == 0:
        raise ModelError(
            f"the image array has shape {array.shape}; expected H×W×3 (RGB) or H×W×4 (RGBA)",
            hint="decode images to RGB before segmenting them",
        )
    if array.dtype != np.uint8:
        if np.issubdtype(array.dtype, np.floating) and array.size and float(np.nanmax(array)) <= 1.0:
            array = array * 255.0
        array = np.clip(np.nan_to_num(array), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(array[:, :, :3])


#: default size of a backend's in-memory encoding cache (several 1008 px SAM 3 encodings)
DEFAULT_CACHE_BYTES = 1 << 30
#: instances turned into masks at a time (bounds memory when many pass a low threshold)
MASK_CHUNK = 16


class TorchSegmenter(Segmenter):
    """Shared shape of the torch backends: options checked at creation, weights loaded on the first
    segment call, image encodings kept in a byte-bounded LRU keyed on the image content, provenance
    and latency on every result, ``unload()`` frees weights and encodings.

    Subclasses set ``info`` and ``OPTIONS`` (their extra option names with defaults), and implement
    ``_load()`` and ``_segment(image, request)``.
    """

    OPTIONS: dict[str, Any] = {}
    #: cap on instances per prompt (None: no cap); ``max_instances`` option overrides it
    DEFAULT_MAX_INSTANCES: int | None = None
    #: what the main checkpoint is called in messages ("weights", "detector weights")
    WEIGHTS_WHAT = "weights"

    def __init__(
        self,
        *,
        weights: str | Path | None = None,
        device: str | None = "auto",
        dtype: str | None = "auto",
        score_threshold: float | None = None,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        max_instances: int | None = -1,
        **options: Any,
    ) -> None:
        from masklens.core.cache.model_cache import EncodingCache

        unknown = sorted(set(options) - set(self.OPTIONS))
        if unknown:
            known = ["weights", "device", "dtype", "score_threshold", "cache_bytes", "max_instances", *self.OPTIONS]
            raise ModelError(
                f"{self.info.name}: unknown option(s) {', '.join(unknown)}",
                hint=f"options of this backend: {', '.join(known)}",
            )
        self.options = {**self.OPTIONS, **options}
        for key, value in self.options.items():
            if key.endswith(("_threshold", "_iou")) and value is not None:
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise ModelError(
                        f"{self.info.name}: option {key} must be a number, got {value!r}"
                    )
                if key.endswith("_iou") and not 0.0 < float(value) <= 1.0:
                    raise ModelError(f"{self.info.name}: option {key} must be in (0, 1], got {value}")
        self.weights_spec = str(weights or self.info.default_weights or "")
        self.score_threshold = float(
            self.info.default_score_threshold if score_threshold is None else score_threshold
        )
        if not 0.0 <= self.score_threshold <= 1.0:
            raise ModelError(
                f"{self.info.name}: score threshold {self.score_threshold} is outside [0, 1]"
            )
        self.max_instances = self.DEFAULT_MAX_INSTANCES if max_instances == -1 else max_instances
        if self.max_instances is not None and (
            isinstance(self.max_instances, bool) or not isinstance(self.max_instances, int) or self.max_instances < 1
        ):
            raise ModelError(f"{self.info.name}: max_instances must be a positive integer or None")
        self._fail_fast_offline()  # before torch is imported: that alone takes seconds
        self.runtime = Runtime.create(device, dtype)
        self.encodings = EncodingCache(int(cache_bytes))
        self._loaded = False
        self._lock = threading.RLock()  # one call at a time: some stages keep per-image state

    def _fail_fast_offline(self) -> None:
        """In offline mode, a Hugging Face id (main weights or a ``*_weights`` option) that is not
        in the cache fails now, with the error loading would give later."""
        from masklens.core.models.weights import fail_fast_offline

        fail_fast_offline(self.weights_spec, backend=self.info.name, what=self.WEIGHTS_WHAT)
        for key, value in self.options.items():
            if key.endswith("_weights") and isinstance(value, str):
                what = "SAM 2 weights" if key == "sam2_weights" else key.replace("_", " ")
                fail_fast_offline(value, backend=self.info.name, what=what)

    # ------------------------------------------------------------ to implement
    def _load(self) -> None:
        raise NotImplementedError

    def _release(self) -> None:
        """Drop references to loaded models (default: attributes named in ``_model_attrs``)."""
        for name in getattr(self, "_model_attrs", ()):
            setattr(self, name, None)

    def _segment(self, image: np.ndarray, request: SegmentRequest) -> SegmentResult:
        raise NotImplementedError

    def _checkpoints(self) -> list[Any]:
        """The resolved checkpoints (``ResolvedWeights``) this backend uses, main one first."""
        return []

    def _extra_provenance(self) -> dict[str, Any]:
        return {}

    # ------------------------------------------------------------ shared
    def ensure_loaded(self, *, available: Callable[[str], int | None] | None = None) -> None:
        """Load the weights unless loaded: first check they fit (``available(device)`` gives the
        free memory, default :func:`~masklens.core.models.memory_fit.device_available`), start
        hashing the checkpoints in the background (the hash is remembered per file, so this is
        usually instant), load, then make every model's forward pass interruptible
        (:mod:`masklens.core.models.interrupt`)."""
        if self._loaded:
            return
        from masklens.core.models.interrupt import make_interruptible, torch_modules
        from masklens.core.models.memory_fit import check_fits, device_available
        from masklens.core.models.native_preload import preload_native_libraries

        self._resolve()  # a missing checkpoint fails before transformers is imported
        checkpoints = self._checkpoints()
        check_fits([c.path for c in checkpoints], self.runtime.device, backend=self.info.name,
                   available=available or device_available)
        for checkpoint in checkpoints:
            checkpoint.hash_in_background()  # off the critical path; provenance waits for it
        with heavy_imports():  # the model modules' first import and the weights' load
            preload_native_libraries()  # triton's library without the GIL, before torchvision imports it
            self._load()
        for module in torch_modules(self, max_depth=3):
            make_interruptible(module)
        self._loaded = True

    def segment(self, image: np.ndarray | str | Path, request: SegmentRequest) -> SegmentResult:
        rgb = as_rgb_image(image)
        with self._lock:
            self.ensure_loaded()
            watch = Stopwatch(self.runtime.device)
            with self.runtime.inference():
                result = self._segment(rgb, request)
            latency = watch.ms()  # image encoding (when not cached) + prompt; not the model load
            result.provenance = {**self.provenance(), **result.provenance, "latency_ms": round(latency, 3)}
        return result

    def encoding(self, tag: str, image: np.ndarray, compute: Any) -> Any:
        """The cached encoding ``tag`` of ``image``, computed once per image content."""
        from masklens.core.cache.model_cache import image_key

        return self.encodings.get_or_compute(f"{tag}:{image_key(image)}", compute, tensor_nbytes)

    def provenance(self) -> dict[str, Any]:
        prov: dict[str, Any] = {
            "model": self.info.name,
            "device": self.runtime.device,
            "dtype": self.runtime.dtype,
            "score_threshold": self.score_threshold,
        }
        checkpoints = self._checkpoints()
        for i, ckpt in enumerate(checkpoints):
            prov.update(ckpt.provenance("checkpoint" if i == 0 else ckpt_role(self, i)))
        prov.update(self._extra_provenance())
        return prov

    def cache_identity(self) -> str:
        """Checkpoint content hashes (resolved without loading the model) for the prediction cache."""
        self._resolve()
        for checkpoint in self._checkpoints():
            checkpoint.hash_in_background()  # several checkpoints are hashed side by side
        return "+".join(c.sha256 for c in self._checkpoints())

    def _resolve(self) -> None:
        """Resolve checkpoint paths (subclasses; cheap, no model load)."""

    def unload(self) -> None:
        with self._lock:
            self._release()
            self.encodings.clear()
            self._loaded = False
        free_accelerator_memory(self.runtime.device)

    def select(self, scores: np.ndarray) -> list[int]:
        """Indices of the instances kept: score ≥ threshold (inclusive), best first, at most
        ``max_instances``."""
        scores = np.asarray(scores, dtype=np.float64).reshape(-1)
        keep = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] >= self.score_threshold]
        return keep if self.max_instances is None else keep[: self.max_instances]

    def finish(
        self,
        probs: Any,
        scores: np.ndarray,
        image: np.ndarray,
        *,
        mask_threshold: float = 0.5,
        presence: float | None = None,
        extra: dict[str, Any] | None = None,
        mask_inclusive: bool = False,
    ) -> SegmentResult:
        """Keep the :meth:`select` ed instances and turn their mask probabilities into binary masks
        at the image's size (pixel > mask_threshold, or ≥ with ``mask_inclusive``).

        ``probs`` is an N×h×w tensor (any h, w) or a function from a list of indices to such a
        tensor for those instances; it is converted in chunks, so memory stays bounded however
        many instances pass the threshold.
        """
        torch = import_torch()
        scores = np.asarray(scores, dtype=np.float64).reshape(-1)
        keep = self.select(scores)
        height, width = image.shape[:2]
        masks: list[Mask] = []
        for start in range(0, len(keep), MASK_CHUNK):
            chunk = keep[start : start + MASK_CHUNK]
            if callable(probs):
                sel = probs(chunk).float()
            else:
                sel = probs[torch.as_tensor(chunk, device=probs.device)].float()
            if tuple(sel.shape[-2:]) != (height, width):
                sel = torch.nn.functional.interpolate(
                    sel[:, None], size=(height, width), mode="bilinear", align_corners=False
                )[:, 0]
            binary = (sel >= mask_threshold) if mask_inclusive else (sel > mask_threshold)
            masks.extend(encode_masks(binary))
        return SegmentResult(
            masks=masks,
            scores=[float(scores[i]) for i in keep],
            presence=presence,
            provenance={"mask_threshold": mask_threshold, **(extra or {})},
        )


#: masks per pycocotools call: it holds the GIL throughout, so a window drawing beside a prompt job
#: waits at most this many masks' encoding. One: ~0.8 ms held per 1800×1200 mask, where 4 held
#: ~3 ms and, preempted on a loaded 2-core machine, 40–100 ms; one per call is no slower in all
#: (3.9–5.1 ms against 5.9–9.6 ms per mask, the column-major copy included, which frees the GIL)
ENCODE_GROUP = 1


def encode_masks(binary: Any, *, transpose_on_device: bool | None = None) -> list[Mask]:
    """COCO RLE masks of an N×H×W boolean tensor, ``ENCODE_GROUP`` masks per pycocotools call:
    pycocotools reads column-major H×W×N, the memory order of the N×W×H transpose. On an
    accelerator the transpose is made there (and only bytes cross to the host); on the CPU NumPy's
    is faster (``transpose_on_device`` forces either way). No other per-mask copy is made."""
    from pycocotools import mask as mask_utils

    n, height, width = (int(v) for v in binary.shape)
    if transpose_on_device is None:
        transpose_on_device = binary.device.type != "cpu"
    if transpose_on_device:
        by_column = binary.transpose(1, 2).contiguous().cpu().numpy().view(np.uint8)  # N×W×H
    else:
        rows = binary.numpy().view(np.uint8)  # N×H×W
    masks: list[Mask] = []
    for start in range(0, n, ENCODE_GROUP):
        if transpose_on_device:
            columns = by_column[start:start + ENCODE_GROUP].transpose(2, 1, 0)
        else:
            columns = np.asfortranarray(rows[start:start + ENCODE_GROUP].transpose(1, 2, 0))
        masks.extend(Mask({"size": [height, width], "counts": rle["counts"]}) for rle in mask_utils.encode(columns))
    return masks


class HfSegmenter(TorchSegmenter):
    """A backend on one transformers checkpoint (``model`` + ``processor`` from one folder, resolved
    from ``weights``); subclasses name the two classes in :meth:`_hf_classes`."""

    _model_attrs = ("model", "processor")

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.model: Any = None
        self.processor: Any = None
        self.weights: ResolvedWeights | None = None

    def _hf_classes(self) -> tuple[Any, Any]:
        """The transformers ``(model class, processor class)``, imported lazily."""
        raise NotImplementedError

    def _resolve(self) -> None:
        if self.weights is None:
            self.weights = resolve_weights(self.weights_spec, backend=self.info.name)

    def _checkpoints(self) -> list[ResolvedWeights]:
        return [self.weights] if self.weights is not None else []

    def _load(self) -> None:
        self._resolve()  # a missing checkpoint fails before transformers is imported
        model_cls, processor_cls = self._hf_classes()
        assert self.weights is not None
        self.processor, self.model = load_hf_pair(
            model_cls, processor_cls, self.weights, backend=self.info.name, device=self.runtime.device
        )


def ckpt_role(segmenter: TorchSegmenter, index: int) -> str:
    """Provenance prefix of a backend's checkpoint number ``index`` (``CHECKPOINT_ROLES`` on the class)."""
    roles = getattr(segmenter, "CHECKPOINT_ROLES", ())
    return roles[index] if index < len(roles) else f"checkpoint{index}"


def fit_text(tokenizer: Any, text: str, limit: int) -> tuple[str, bool]:
    """The longest word prefix of ``text`` whose tokens (with special tokens) fit in ``limit``,
    and whether it had to be cut (text encoders have a fixed number of positions)."""

    def fits(candidate: str) -> bool:
        return len(tokenizer(candidate)["input_ids"]) <= limit

    if fits(text):
        return text, False
    words = text.split()
    lo, hi = 0, len(words)
    while lo < hi:  # largest k with words[:k] fitting
        mid = (lo + hi + 1) // 2
        if fits(" ".join(words[:mid])):
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]), True
