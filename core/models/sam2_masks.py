"""The shared "boxes -> SAM 2 masks" stage of the detector + SAM 2 pipelines.

Two implementations behind one small interface:

- :class:`HFSam2Masker` — transformers ``Sam2Model`` + ``Sam2Processor`` for Hugging Face checkpoints
  (a ``save_pretrained`` folder or a hub id such as ``facebook/sam2.1-hiera-large``); the image is
  encoded once with ``get_image_embeddings``.
- :class:`MetaSam2Masker` — Meta's ``sam2`` package (hydra config + ``SAM2ImagePredictor``) for the
  original ``.pt`` checkpoints; the predictor's image features are computed once per image.

Both keep their encodings in the owning segmenter's byte-bounded cache, keyed on image content.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from masklens.core.errors import ModelError
from masklens.core.models.torch_device import Runtime, import_torch
from masklens.core.models.torch_runtime import TorchSegmenter
from masklens.core.models.weights import ResolvedWeights, load_hf_pair, safe_torch_load

DEFAULT_SAM2_WEIGHTS = "facebook/sam2.1-hiera-large"
#: the package config matching each original checkpoint's file name
META_CONFIGS = {
    "sam2.1_hiera_tiny": "configs/sam2.1/sam2.1_hiera_t.yaml",
    "sam2.1_hiera_small": "configs/sam2.1/sam2.1_hiera_s.yaml",
    "sam2.1_hiera_base_plus": "configs/sam2.1/sam2.1_hiera_b+.yaml",
    "sam2.1_hiera_large": "configs/sam2.1/sam2.1_hiera_l.yaml",
    "sam2_hiera_tiny": "configs/sam2/sam2_hiera_t.yaml",
    "sam2_hiera_small": "configs/sam2/sam2_hiera_s.yaml",
    "sam2_hiera_base_plus": "configs/sam2/sam2_hiera_b+.yaml",
    "sam2_hiera_large": "configs/sam2/sam2_hiera_l.yaml",
}
#: what Meta's build_sam2 applies for image prediction (dynamic multimask fallback)
META_POSTPROCESSING = {
    "dynamic_multimask_via_stability": True,
    "dynamic_multimask_stability_delta": 0.05,
    "dynamic_multimask_stability_thresh": 0.98,
}


def box_nms(boxes: np.ndarray, scores: np.ndarray, iou: float | None) -> np.ndarray:
    """Indices kept by non-maximum suppression (torchvision), highest score first; all when ``iou`` is None."""
    order = np.argsort(-scores, kind="stable")
    if iou is None or len(order) <= 1:
        return order
    torch = import_torch()
    from torchvision.ops import nms

    keep = nms(torch.as_tensor(boxes, dtype=torch.float32), torch.as_tensor(scores, dtype=torch.float32), iou)
    return keep.cpu().numpy()


class BoxMasker(Protocol):
    """Turns pixel boxes (x0, y0, x1, y1) on an image into mask logits at the image's size."""

    name: str

    def load(self) -> None: ...

    def mask_logits(self, owner: TorchSegmenter, image: np.ndarray, boxes: np.ndarray) -> Any:
        """An N×H×W float tensor of mask logits (> 0 is foreground), one per box."""

    def point_logits(self, owner: TorchSegmenter, image: np.ndarray, points: np.ndarray) -> tuple[Any, float]:
        """One 1×H×W mask-logit tensor from clicks (x, y, label 1/0) and SAM 2's predicted IoU."""


class HFSam2Masker:
    """SAM 2 through transformers (``Sam2Model``); single-mask output per box."""

    name = "sam2-hf"

    def __init__(self, weights: ResolvedWeights, runtime: Runtime, backend: str) -> None:
        self.weights, self.runtime, self.backend = weights, runtime, backend
        self.model: Any = None
        self.processor: Any = None

    def load(self) -> None:
        from transformers import Sam2Model, Sam2Processor

        self.processor, self.model = load_hf_pair(
            Sam2Model, Sam2Processor, self.weights, backend=self.backend, device=self.runtime.device, label="SAM 2"
        )

    def embeddings(self, owner: TorchSegmenter, image: np.ndarray) -> Any:
        def compute() -> Any:
            batch = self.processor(images=image, return_tensors="pt")
            return self.model.get_image_embeddings(batch["pixel_values"].to(self.runtime.device))

        return owner.encoding(f"sam2hf:{self.weights.path}", image, compute)

    def mask_logits(self, owner: TorchSegmenter, image: np.ndarray, boxes: np.ndarray) -> Any:
        torch = import_torch()
        height, width = image.shape[:2]
        if len(boxes) == 0:
            return torch.zeros((0, height, width))
        embeds = self.embeddings(owner, image)
        prompt = self.processor(
            input_boxes=[[list(map(float, b)) for b in boxes]],
            original_sizes=[[height, width]],
            return_tensors="pt",
        )
        out = self.model(
            image_embeddings=embeds,
            input_boxes=prompt["input_boxes"].to(self.runtime.device),
            multimask_output=False,
        )
        logits = self.processor.post_process_masks(
            out.pred_masks.float(), [[height, width]], binarize=False
        )[0]  # (N, 1, H, W)
        return logits[:, 0]

    def point_logits(self, owner: TorchSegmenter, image: np.ndarray, points: np.ndarray) -> tuple[Any, float]:
        height, width = image.shape[:2]
        embeds = self.embeddings(owner, image)
        prompt = self.processor(
            input_points=[[[[float(x), float(y)] for x, y, _ in points]]],
            input_labels=[[[int(label) for _, _, label in points]]],
            original_sizes=[[height, width]],
            return_tensors="pt",
        )
        out = self.model(
            image_embeddings=embeds,
            input_points=prompt["input_points"].to(self.runtime.device),
            input_labels=prompt["input_labels"].to(self.runtime.device),
            multimask_output=False,
        )
        logits = self.processor.post_process_masks(out.pred_masks.float(), [[height, width]], binarize=False)[0]
        return logits[0], float(out.iou_scores.float().reshape(-1)[0])

    def release(self) -> None:
        self.model = self.processor = None


class MetaSam2Masker:
    """SAM 2 through Meta's ``sam2`` package for original ``.pt`` checkpoints and their config.

    ``config`` is a config of the package (``configs/sam2.1/sam2.1_hiera_l.yaml``) or a YAML file
    whose ``_target_``s are all SAM 2 model classes (anything else is refused before hydra sees
    it); when omitted it is inferred from the checkpoint's file name.
    """

    name = "sam2-meta"

    def __init__(self, weights: ResolvedWeights, config: str | None, runtime: Runtime, backend: str) -> None:
        from masklens.core.runtime.extras import check, extra_modules

        check(f"{backend}: the original SAM 2 checkpoint '{weights.path.name}'", extra_modules()["sam2"],
              model=True, extra="sam2")
        self.weights, self.runtime, self.backend = weights, runtime, backend
        self.config = config or META_CONFIGS.get(weights.path.stem)
        if self.config is None:
            raise ModelError(
                f"{backend}: cannot tell which SAM 2 config matches checkpoint '{weights.path.name}'",
                path=weights.path,
                hint="pass sam2_config (e.g. configs/sam2.1/sam2.1_hiera_l.yaml or a YAML file path)",
            )
        self.predictor: Any = None

    def _config(self) -> Any:
        """The config as checked data (see :mod:`masklens.core.models.sam2_config`): a shipped
        config by name or a YAML whose ``_target_``s are all SAM 2 model classes."""
        from omegaconf import OmegaConf

        from masklens.core.models.sam2_config import load_sam2_config

        cfg = load_sam2_config(str(self.config), backend=self.backend)
        for key, value in META_POSTPROCESSING.items():
            OmegaConf.update(cfg, f"model.sam_mask_decoder_extra_args.{key}", value, force_add=True)
        OmegaConf.resolve(cfg)
        return cfg

    def load(self) -> None:
        from hydra.utils import instantiate
        from sam2.sam2_image_predictor import SAM2ImagePredictor

        cfg = self._config()
        model = instantiate(cfg.model, _recursive_=True)
        state = safe_torch_load(self.weights.path, backend=self.backend)
        state = state.get("model", state) if isinstance(state, dict) else state
        if not isinstance(state, dict):
            raise ModelError(
                f"{self.backend}: the checkpoint holds no state_dict", path=self.weights.path
            )
        hint = "pass the sam2_config that belongs to this checkpoint"
        try:
            missing, unexpected = model.load_state_dict(state, strict=False)
        except RuntimeError as exc:  # tensor shapes differ
            raise ModelError(
                f"{self.backend}: checkpoint and config '{self.config}' do not match "
                f"({str(exc).splitlines()[-1].strip()[:200]})",
                path=self.weights.path,
                hint=hint,
            ) from exc
        if missing or unexpected:
            raise ModelError(
                f"{self.backend}: checkpoint and config '{self.config}' do not match "
                f"({len(missing)} missing, {len(unexpected)} unexpected keys, e.g. "
                f"{(list(missing) + list(unexpected))[:3]})",
                path=self.weights.path,
                hint=hint,
            )
        model = model.to(self.runtime.device).eval()
        self.predictor = SAM2ImagePredictor(model)
        # the predictor hard-codes the feature sizes of a 1024 px model; derive them from the config
        size = int(model.image_size)
        self.predictor._bb_feat_sizes = [(size // 4, size // 4), (size // 8, size // 8), (size // 16, size // 16)]

    def mask_logits(self, owner: TorchSegmenter, image: np.ndarray, boxes: np.ndarray) -> Any:
        torch = import_torch()
        height, width = image.shape[:2]
        if len(boxes) == 0:
            return torch.zeros((0, height, width))
        predictor = self._set_image(owner, image)
        masks, _, _ = predictor.predict(
            box=np.asarray(boxes, dtype=np.float32), multimask_output=False, return_logits=True
        )
        return torch.as_tensor(np.asarray(masks, dtype=np.float32).reshape(len(boxes), height, width))

    def _set_image(self, owner: TorchSegmenter, image: np.ndarray) -> Any:
        """The predictor, holding ``image``'s features (computed once per image content)."""
        predictor = self.predictor

        def compute() -> Any:
            predictor.set_image(image)
            return {"features": predictor._features, "orig_hw": list(predictor._orig_hw)}

        state = owner.encoding(f"sam2meta:{self.weights.path}", image, compute)
        predictor._features, predictor._orig_hw = state["features"], list(state["orig_hw"])
        predictor._is_image_set, predictor._is_batch = True, False
        return predictor

    def point_logits(self, owner: TorchSegmenter, image: np.ndarray, points: np.ndarray) -> tuple[Any, float]:
        torch = import_torch()
        height, width = image.shape[:2]
        predictor = self._set_image(owner, image)
        masks, scores, _ = predictor.predict(
            point_coords=np.asarray([[x, y] for x, y, _ in points], dtype=np.float32),
            point_labels=np.asarray([label for _, _, label in points], dtype=np.int32),
            multimask_output=False,
            return_logits=True,
        )
        logits = torch.as_tensor(np.asarray(masks, dtype=np.float32).reshape(1, height, width))
        return logits, float(np.asarray(scores).reshape(-1)[0])

    def release(self) -> None:
        self.predictor = None


def make_box_masker(
    weights: ResolvedWeights, config: str | None, runtime: Runtime, backend: str
) -> HFSam2Masker | MetaSam2Masker:
    """A ``.pt``/``.pth`` file goes to Meta's package, a folder (or hub id) to transformers."""
    if weights.path.is_file():
        if weights.path.suffix not in (".pt", ".pth"):
            raise ModelError(
                f"{backend}: a SAM 2 checkpoint file must be an original .pt checkpoint",
                path=weights.path,
                hint="or pass a Hugging Face SAM 2 folder / model id (facebook/sam2.1-hiera-large)",
            )
        return MetaSam2Masker(weights, config, runtime, backend)
    return HFSam2Masker(weights, runtime, backend)


class DetectorSam2Segmenter(TorchSegmenter):
    """Open-vocabulary boxes from a detector, then one SAM 2 mask per box; the instance score is the
    detector's box score. Subclasses name the detector's transformers classes in
    ``_detector_classes()`` (loaded into ``detector`` / ``detector_processor``, messages say
    ``DETECTOR_LABEL``) and implement ``_detect(image, text)``.

    Options shared by the detector pipelines: ``sam2_weights`` (HF folder / hub id, or an original
    ``.pt``), ``sam2_config`` (for a ``.pt``), ``nms_iou`` (box NMS, None = off), ``mask_threshold``
    (on SAM 2 mask logits, 0.0 as SAM 2 does).
    """

    CHECKPOINT_ROLES = ("checkpoint", "sam2_checkpoint")
    DEFAULT_MAX_INSTANCES = 100
    OPTIONS = {"sam2_weights": DEFAULT_SAM2_WEIGHTS, "sam2_config": None, "nms_iou": None, "mask_threshold": 0.0}
    DETECTOR_LABEL = "detector"
    WEIGHTS_WHAT = "detector weights"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.detector: Any = None
        self.detector_processor: Any = None
        self.detector_weights: ResolvedWeights | None = None
        self.sam2_weights: ResolvedWeights | None = None
        self.masker: HFSam2Masker | MetaSam2Masker | None = None

    def _resolve(self) -> None:
        from masklens.core.models.weights import resolve_weights

        if self.detector_weights is None:
            self.detector_weights = resolve_weights(self.weights_spec, backend=self.info.name, what="detector weights")
        if self.sam2_weights is None:
            spec = self.options["sam2_weights"] or DEFAULT_SAM2_WEIGHTS
            self.sam2_weights = resolve_weights(spec, backend=self.info.name, what="SAM 2 weights")

    def _checkpoints(self) -> list[ResolvedWeights]:
        return [w for w in (self.detector_weights, self.sam2_weights) if w is not None]

    def _extra_provenance(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"nms_iou": self.options["nms_iou"]}
        if self.masker is not None:
            extra["sam2_impl"] = self.masker.name
            if isinstance(self.masker, MetaSam2Masker):
                extra["sam2_config"] = str(self.masker.config)
        return extra

    def _load(self) -> None:
        self._resolve()
        assert self.sam2_weights is not None
        self._load_detector()
        self.masker = make_box_masker(self.sam2_weights, self.options["sam2_config"], self.runtime, self.info.name)
        self.masker.load()

    def _release(self) -> None:
        self._release_detector()
        if self.masker is not None:
            self.masker.release()
        self.masker = None

    def _detector_classes(self) -> tuple[Any, Any]:
        """The detector's transformers ``(model class, processor class)``, imported lazily."""
        raise NotImplementedError

    def _load_detector(self) -> None:
        model_cls, processor_cls = self._detector_classes()
        assert self.detector_weights is not None
        self.detector_processor, self.detector = load_hf_pair(
            model_cls, processor_cls, self.detector_weights,
            backend=self.info.name, device=self.runtime.device, label=self.DETECTOR_LABEL,
        )

    def _release_detector(self) -> None:
        self.detector = self.detector_processor = None

    def _detect(self, image: np.ndarray, text: str) -> tuple[np.ndarray, np.ndarray]:
        """Boxes (N×4, x0 y0 x1 y1 pixels) and scores (N) for ``text``, before any threshold."""
        raise NotImplementedError

    def _segment(self, image: np.ndarray, request: Any) -> Any:
        height, width = image.shape[:2]
        assert self.masker is not None
        if not request.text and request.points:
            logits, iou = self.masker.point_logits(self, image, np.asarray(request.points, dtype=np.float64))
            result = self.finish(logits, np.array([iou]), image, mask_threshold=float(self.options["mask_threshold"]))
            result.provenance["prompt"] = "points"
            return result
        self._truncated = False
        if request.text:
            boxes, scores = self._detect(image, request.text)
        elif request.boxes:
            boxes = np.asarray(request.boxes, dtype=np.float32).reshape(-1, 4)
            scores = np.ones(len(boxes))
        else:
            raise ModelError(f"{self.info.name}: empty prompt", hint="give a text prompt, boxes or points")
        prompts = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)  # SAM 2 gets these, unclipped
        scores = np.asarray(scores, dtype=np.float64).reshape(-1)
        boxes = prompts.copy()
        boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, width)
        boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, height)
        # inclusive threshold; boxes with no area inside the image are not detections of it
        has_area = (boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])
        accepted = np.flatnonzero((scores >= self.score_threshold) & has_area)
        boxes, prompts, scores = boxes[accepted], prompts[accepted], scores[accepted]
        order = box_nms(boxes, scores, self.options["nms_iou"])
        boxes, prompts, scores = boxes[order], prompts[order], scores[order]
        masker = self.masker
        # SAM 2 prompted with the detector's own boxes, as the reference pipelines do (a box clipped
        # to the image is another prompt and gives another mask); NMS and provenance use the clipped
        result = self.finish(
            lambda idx: masker.mask_logits(self, image, prompts[idx]),  # SAM 2 only on kept boxes
            scores,
            image,
            mask_threshold=float(self.options["mask_threshold"]),
        )
        result.provenance["boxes"] = [[round(float(v), 2) for v in boxes[i]] for i in self.select(scores)]
        if self._truncated:
            result.provenance["text_truncated"] = True
        return result
