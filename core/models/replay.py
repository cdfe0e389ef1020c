"""Backend ``replay``: answers prompts from a prediction file computed elsewhere (e.g. on a cluster).

The file is in any benchmark's own prediction format and is read by that kind's
``load_predictions`` — exactly what ``masklens score KIND`` reads. A request is
matched to a benchmark prompt by the *content* of the image (its
:func:`~masklens.core.cache.model_cache.image_key`, so renamed or copied files still match)
and the prompt text (case- and whitespace-insensitive; the role breaks ties).
A request with no recorded answer gets an empty result flagged
``provenance["missing"] = True`` (the runner lists such prompts in
``PredictionSet.missing``, which metrics skip).

``create`` options:

- ``kind`` (required): the benchmark kind name (``cafe``, ``pcs``, ``hallusegbench``,
  ``cgebench``, ``r2sm``, ``ovs``) or a :class:`BenchmarkKind` instance.
- ``args``: an ``argparse.Namespace`` with the kind's arguments as ``masklens score
  KIND`` parses them (ground truth *and* predictions), or
- ``argv``: the same as a list of command-line words, e.g. ``["--ann", "a.json",
  "--pred", "p.json"]``, and/or
- any of the kind's argument destinations as keywords (``ann=…, pred=…``), which
  override ``args``/``argv``.
- ``weights``: shorthand for the kind's prediction argument (``--pred`` or
  ``--pred-dir``), so ``masklens predict cafe --model replay --weights p.json`` works.
- ``benchmark`` / ``predictions``: already loaded objects (the GUI passes its own).
- ``images``: folder to look for image files (default: the kind's ``--images``).
- ``score_threshold``: drop recorded instances scored below it (default: keep all).
- ``device``: accepted and ignored.
"""

from __future__ import annotations

import argparse
import re
import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from masklens.core.cache.model_cache import image_key
from masklens.core.errors import MasklensError, ModelError
from masklens.core.masks import resize_nearest
from masklens.core.models.base import BackendInfo, Segmenter, SegmentRequest, SegmentResult
from masklens.core.schema import Benchmark, ImageRef, Prediction, PredictionSet, Prompt
from masklens.core.scoring.contract import BenchmarkKind, get_kind
from masklens.core.scoring.kind_args import kind_files, kind_parser, prediction_actions

INFO = BackendInfo(
    name="replay",
    title="Replay a prediction file",
    default_weights=None,
    default_score_threshold=0.0,
    description=(
        "Answers from predictions computed elsewhere (any benchmark's prediction format); "
        "matches prompts by image content and prompt text. Runs no model."
    ),
    needs_weights=False,
)


# ------------------------------------------------------------ kind arguments
def kind_namespace(
    kind: BenchmarkKind,
    *,
    args: argparse.Namespace | Mapping[str, Any] | None = None,
    argv: Sequence[str] | None = None,
    optional: Iterable[str] = (),
    **values: Any,
) -> argparse.Namespace:
    """The kind's arguments from a Namespace, command-line words and/or keywords (later wins);
    a required argument left unset (and not named in ``optional``) raises MasklensError."""
    optional = set(optional)
    parser = kind_parser(kind)
    actions = [a for a in parser._actions if a.dest != argparse.SUPPRESS]
    ns = argparse.Namespace(**{a.dest: a.default for a in actions})
    if args is not None:
        given = vars(args) if isinstance(args, argparse.Namespace) else dict(args)
        for k, v in given.items():
            setattr(ns, k, v)
    if argv:
        for a in actions:
            a.required = False  # checked below, across all sources
        parsed = parser.parse_args(list(argv))
        for a in actions:
            value = getattr(parsed, a.dest, None)
            if value is not None and value != a.default:
                setattr(ns, a.dest, value)
    for k, v in values.items():
        setattr(ns, k, v)
    for a in kind_parser(kind)._actions:
        if a.required and a.dest not in optional and getattr(ns, a.dest, None) is None:
            raise MasklensError(
                f"replay of {kind.title or kind.name} needs {'/'.join(a.option_strings) or a.dest}",
                hint="give the benchmark files and the prediction file as for `masklens score`",
            )
    return ns


# ------------------------------------------------------------ the segmenter
def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().casefold())


class ReplaySegmenter(Segmenter):
    """Answers requests from a loaded PredictionSet (loaded lazily on first use)."""

    info = INFO
    cacheable = False  # the prediction file is already a cache

    def __init__(
        self,
        kind: BenchmarkKind,
        namespace: argparse.Namespace,
        *,
        benchmark: Benchmark | None = None,
        predictions: PredictionSet | None = None,
        images: str | Path | None = None,
        score_threshold: float | None = None,
    ) -> None:
        self.kind = kind
        self.namespace = namespace
        self.images = images if images is not None else getattr(namespace, "images", None)
        self.score_threshold = score_threshold
        self._benchmark = benchmark
        self._predictions = predictions
        self._lock = threading.RLock()
        #: normalised prompt text -> (image ref, prompt) pairs asking it
        self._by_text: dict[str, list[tuple[ImageRef, Prompt]]] | None = None
        #: content hash of each benchmark image read so far, by image ref
        self._ref_keys: dict[ImageRef, str | None] = {}

    # ------------------------------------------------------------ loading
    def load(self) -> None:
        """Read the benchmark and the prediction file (idempotent)."""
        with self._lock:
            if self._benchmark is None:
                self._benchmark = self.kind.load_benchmark(**kind_files(self.kind, self.namespace))
            if self._predictions is None:
                self._predictions = self.kind.load_predictions(
                    self._benchmark, **kind_files(self.kind, self.namespace))
            if self._by_text is None:
                by_text: dict[str, list[tuple[ImageRef, Prompt]]] = defaultdict(list)
                for sample in self._benchmark.samples:
                    for prompt in sample.prompts:
                        ref = sample.images.get(prompt.image)
                        if ref is not None:
                            by_text[_norm(prompt.text)].append((ref, prompt))
                self._by_text = dict(by_text)

    @property
    def benchmark(self) -> Benchmark:
        self.load()
        assert self._benchmark is not None
        return self._benchmark

    @property
    def predictions(self) -> PredictionSet:
        self.load()
        assert self._predictions is not None
        return self._predictions

    def _ref_key(self, ref: ImageRef) -> str | None:
        """Content hash of a benchmark image (read once), None when it cannot be read."""
        from masklens.core.inference.runner import load_image, resolve_image_path

        if ref not in self._ref_keys:
            try:
                self._ref_keys[ref] = image_key(
                    load_image(resolve_image_path(ref, self.images), (ref.height, ref.width))
                )
            except MasklensError:
                self._ref_keys[ref] = None  # an image we cannot read cannot match
        return self._ref_keys[ref]

    def match(self, image: np.ndarray, request: SegmentRequest) -> Prompt | None:
        """The benchmark prompt a request corresponds to, or None.

        Only benchmark images that carry a prompt with the same text (and, where any
        does, the request image's size) are read and hashed, each once."""
        with self._lock:
            self.load()
            assert self._by_text is not None
            pairs = self._by_text.get(_norm(request.text), [])
            shape = tuple(image.shape[:2])
            # images of the request's size first; all of them if the annotation's sizes are off
            pairs = [(r, p) for r, p in pairs if (r.height, r.width) == shape] or pairs
            if not pairs:
                return None
            key = image_key(np.ascontiguousarray(image))
            same = [p for r, p in pairs if self._ref_key(r) == key]
        if request.role:
            with_role = [p for p in same if str(p.role) == str(request.role)]
            same = with_role or same
        return same[0] if same else None

    # ------------------------------------------------------------ answering
    def result_for(self, prompt_id: str, height: int | None = None, width: int | None = None) -> SegmentResult:
        """The recorded answer for a benchmark prompt id (masks resized to height×width if given)."""
        pred = self.predictions.get(prompt_id)
        if pred is None:
            return self._missing(prompt_id)
        return self._convert(pred, height, width)

    def segment(self, image: np.ndarray, request: SegmentRequest) -> SegmentResult:
        prompt = self.match(image, request)
        if prompt is None:
            return self._missing(None, request.text)
        return self.result_for(prompt.id, int(image.shape[0]), int(image.shape[1]))

    def _convert(self, pred: Prediction, height: int | None, width: int | None) -> SegmentResult:
        t = self.score_threshold
        inst = [i for i in pred.instances if t is None or i.score >= t]
        masks = [
            resize_nearest(i.mask, height, width)
            if height is not None and width is not None and i.mask.shape != (height, width)
            else i.mask
            for i in inst
        ]
        prov = {**self.provenance(), **dict(pred.provenance), "prompt_id": pred.prompt_id}
        return SegmentResult(masks, [i.score for i in inst], presence=pred.presence, provenance=prov)

    def _missing(self, prompt_id: str | None, text: str | None = None) -> SegmentResult:
        prov = {**self.provenance(), "missing": True}
        if prompt_id is not None:
            prov["prompt_id"] = prompt_id
        if text is not None:
            prov["text"] = text
        return SegmentResult([], [], presence=None, provenance=prov)

    def provenance(self) -> dict[str, Any]:
        src = {
            k: str(v)
            for k, v in vars(self.namespace).items()
            if k.startswith("pred") and v is not None
        }
        out: dict[str, Any] = {"model": "replay", "kind": self.kind.name, **src}
        if self.score_threshold is not None:
            out["score_threshold"] = self.score_threshold
        return out

    def unload(self) -> None:
        with self._lock:
            self._ref_keys.clear()
            self._by_text = None


def create(
    *,
    kind: str | BenchmarkKind | None = None,
    args: argparse.Namespace | Mapping[str, Any] | None = None,
    argv: Sequence[str] | None = None,
    benchmark: Benchmark | None = None,
    predictions: PredictionSet | None = None,
    weights: str | None = None,
    images: str | Path | None = None,
    score_threshold: float | None = None,
    device: str | None = None,
    **kind_args: Any,
) -> ReplaySegmenter:
    """Build a replay segmenter (see the module docstring for the options)."""
    del device  # nothing runs on a device
    if kind is None:
        raise ModelError(
            "the replay model needs the benchmark kind of its prediction file",
            hint="e.g. create('replay', kind='cafe', ann=..., pred=...)",
        )
    k = get_kind(kind) if isinstance(kind, str) else kind
    if weights is not None:
        dests = [a.dest for a in prediction_actions(kind_parser(k))]
        if len(dests) != 1:
            raise ModelError(
                f"cannot tell which prediction argument of {k.name} --weights stands for",
                hint=f"pass the prediction file with the kind's own flag ({', '.join(dests) or 'none'})",
            )
        kind_args.setdefault(dests[0], weights)
    parser = kind_parser(k)
    preds = {a.dest for a in prediction_actions(parser)}
    optional: set[str] = set()
    if predictions is not None:
        optional |= preds
    if benchmark is not None:
        optional |= {a.dest for a in parser._actions} - preds
    ns = kind_namespace(k, args=args, argv=argv, optional=optional, **kind_args)
    return ReplaySegmenter(
        k, ns, benchmark=benchmark, predictions=predictions, images=images,
        score_threshold=score_threshold,
    )
