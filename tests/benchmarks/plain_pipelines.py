"""The plain transformers way of running each backend's model(s), for `make bench-models`
baselines: the model card's processor → model → post-processing, no masklens code, no cache.
Each returns binary masks at the image's size as numpy (what a user would hand on)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def _load(model_cls: Any, processor_cls: Any, folder: Path, device: str) -> tuple[Any, Any]:
    processor = processor_cls.from_pretrained(str(folder))
    model = model_cls.from_pretrained(str(folder)).to(device).eval()
    return processor, model


def _to(batch: Any, device: str) -> Any:
    return batch.to(device)


def clipseg(folders: list[Path], device: str) -> Callable[[np.ndarray, str], Any]:
    import torch
    from transformers import CLIPSegForImageSegmentation, CLIPSegProcessor

    processor, model = _load(CLIPSegForImageSegmentation, CLIPSegProcessor, folders[0], device)

    def run(image: np.ndarray, text: str) -> np.ndarray:
        inputs = _to(processor(text=[text], images=[image], padding=True, return_tensors="pt"), device)
        with torch.inference_mode():
            logits = model(**inputs).logits
        probs = torch.sigmoid(logits.reshape(1, 1, *logits.shape[-2:]).float())
        probs = torch.nn.functional.interpolate(probs, size=image.shape[:2], mode="bilinear")
        return (probs[0, 0] > 0.5).cpu().numpy()

    return run


def sam3(folders: list[Path], device: str) -> Callable[[np.ndarray, str], Any]:
    import torch
    from transformers import Sam3Model, Sam3Processor

    processor, model = _load(Sam3Model, Sam3Processor, folders[0], device)

    def run(image: np.ndarray, text: str) -> Any:
        inputs = _to(processor(images=image, text=text, return_tensors="pt"), device)
        with torch.inference_mode():
            outputs = model(**inputs)
        result = processor.post_process_instance_segmentation(
            outputs, threshold=0.5, mask_threshold=0.5, target_sizes=inputs["original_sizes"].tolist())[0]
        return result["masks"].cpu().numpy()

    return run


def _sam2(folder: Path, device: str) -> Callable[[np.ndarray, Any], Any]:
    import torch
    from transformers import Sam2Model, Sam2Processor

    processor, model = _load(Sam2Model, Sam2Processor, folder, device)

    def masks(image: np.ndarray, boxes: Any) -> Any:
        if len(boxes) == 0:
            return np.zeros((0, *image.shape[:2]), bool)
        inputs = _to(processor(images=image, input_boxes=[[list(map(float, b)) for b in boxes]],
                               return_tensors="pt"), device)
        with torch.inference_mode():
            out = model(**inputs, multimask_output=False)
        return processor.post_process_masks(out.pred_masks.cpu(), inputs["original_sizes"].cpu())[0].numpy()

    return masks


def grounded_sam2(folders: list[Path], device: str) -> Callable[[np.ndarray, str], Any]:
    import torch
    from transformers import GroundingDinoForObjectDetection, GroundingDinoProcessor

    processor, model = _load(GroundingDinoForObjectDetection, GroundingDinoProcessor, folders[0], device)
    masks = _sam2(folders[1], device)

    def run(image: np.ndarray, text: str) -> Any:
        inputs = _to(processor(images=image, text=text.lower().rstrip(".") + ".", return_tensors="pt"), device)
        with torch.inference_mode():
            outputs = model(**inputs)
        det = processor.post_process_grounded_object_detection(
            outputs, inputs["input_ids"], threshold=0.2, text_threshold=0.2,
            target_sizes=[image.shape[:2]])[0]
        return masks(image, det["boxes"][:16].cpu().tolist())

    return run


def owlv2_sam2(folders: list[Path], device: str) -> Callable[[np.ndarray, str], Any]:
    import torch
    from transformers import Owlv2ForObjectDetection, Owlv2Processor

    processor, model = _load(Owlv2ForObjectDetection, Owlv2Processor, folders[0], device)
    masks = _sam2(folders[1], device)

    def run(image: np.ndarray, text: str) -> Any:
        inputs = _to(processor(text=[[text]], images=image, return_tensors="pt"), device)
        with torch.inference_mode():
            outputs = model(**inputs)
        side = max(image.shape[:2])  # OWLv2 pads to a square
        det = processor.post_process_grounded_object_detection(
            outputs, threshold=0.2, target_sizes=[(side, side)])[0]
        return masks(image, det["boxes"][:16].cpu().tolist())

    return run


PIPELINES: dict[str, Callable[[list[Path], str], Callable[[np.ndarray, str], Any]]] = {
    "clipseg": clipseg, "sam3": sam3, "grounded-sam2": grounded_sam2, "owlv2-sam2": owlv2_sam2,
}
#: the transformers classes each pipeline uses (imported before timing)
CLASSES: dict[str, tuple[str, ...]] = {
    "clipseg": ("CLIPSegForImageSegmentation", "CLIPSegProcessor"),
    "sam3": ("Sam3Model", "Sam3Processor"),
    "grounded-sam2": ("GroundingDinoForObjectDetection", "GroundingDinoProcessor", "Sam2Model", "Sam2Processor"),
    "owlv2-sam2": ("Owlv2ForObjectDetection", "Owlv2Processor", "Sam2Model", "Sam2Processor"),
}
