"""The OVS part of the bundled demo: shape scenes in the demo palette, a vocabulary with
near-synonyms, per-class ground truth and the `demo` segmenter's predictions, in the
masklens OVS format (docs/formats/ovs.md).

Scenes are drawn with :mod:`demo_scenes` (the demo segmenter's palette). The vocabulary
holds near-synonyms the demo model answers alike ("grass"/"lawn", "circle"/"disc"/"ball",
"square"/"box") and near-misses it confuses ("rectangle" also covers squares, "sun" is a
yellow/orange circle in the sky, "kite" a triangle there), so the protocol finds out-matched
pairs and the ambiguity graph has meaningful communities. Ground truth labels each visible
pixel once: the backgrounds "sky"/"grass" and each shape under its own kind word.

``pred.json`` is exactly what ``masklens predict ovs --model demo --score-threshold 0.05``
writes (``write_predictions``' ``masks`` form): instances are the demo model's masks with
their scores, B(τ) = union of instances scored ≥ τ.

    python tools/demo/make_demo.py --only ovs
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from demo_common import COLOURS
from demo_scenes import Scene, Shape, place, render, save_png

from masklens.core.files.io import atomic_write_json
from masklens.core.kinds.ovs.kind import FORMAT, load_ovs_annotations, write_ovs_predictions
from masklens.core.masks import Mask
from masklens.core.models.base import Segmenter, SegmentRequest
from masklens.core.models.demo_vision import BACKGROUNDS
from masklens.core.schema import Benchmark, Instance, Prediction, PredictionSet, Role

VOCABULARY = [
    "sky", "grass", "lawn", "circle", "disc", "ball", "square", "box",
    "rectangle", "triangle", "star", "sun", "kite",
]
H, W = 256, 320
#: per image: background and the shape kinds drawn (sizes, colours, places are random)
SCENES: list[tuple[str, tuple[str, ...]]] = [
    ("horizon", ("circle", "square", "triangle")),
    ("horizon", ("star", "rectangle", "circle")),
    ("sky", ("circle", "triangle", "square")),
    ("grass", ("square", "circle", "star")),
    ("horizon", ("triangle", "square", "rectangle", "circle")),
    ("plain", ("circle", "star", "square")),
    ("horizon", ("rectangle", "triangle")),
    ("sky", ("star", "circle", "rectangle")),
    ("grass", ("triangle", "square", "circle")),
    ("horizon", ("square", "star", "circle", "triangle")),
]
BACKGROUND_CLASSES = {"sky": ("sky",), "grass": ("grass",), "horizon": ("sky", "grass"), "plain": ()}


def _scene(rng: np.random.Generator, background: str, kinds: tuple[str, ...]) -> Scene:
    """Shapes of ``kinds``, sizes 12–40 px, a few overlapping (occlusion shrinks the visible part)."""
    scene = Scene(H, W, background, horizon=float(rng.uniform(0.45, 0.65)))
    for kind in kinds:
        size = float(rng.uniform(12, 40))
        margin = -size * 0.6 if rng.random() < 0.25 else 10.0
        cx, cy = place(rng, scene, size, avoid=scene.shapes, margin=margin)
        scene.shapes.append(Shape(kind, str(rng.choice(COLOURS)), cx, cy, round(size, 1)))
    return scene


def _ground_truth(scene: Scene, modal: list[np.ndarray], image: np.ndarray) -> dict[str, np.ndarray]:
    """One mask per class: visible pixels of each kind, and the uncovered background(s)."""
    gt: dict[str, np.ndarray] = {}
    covered = np.zeros((H, W), bool)
    for shape, m in zip(scene.shapes, modal, strict=True):
        gt[shape.kind] = gt.get(shape.kind, np.zeros((H, W), bool)) | m
        covered |= m
    for name in BACKGROUND_CLASSES[scene.background]:
        gt[name] = (image == np.array(BACKGROUNDS[name], np.uint8)).all(axis=2) & ~covered
    return gt


def _predictions(model: Segmenter, benchmark: Benchmark, images: dict[int, np.ndarray]) -> PredictionSet:
    """Every vocabulary prompt of every image through ``model``, as `masklens predict` asks it."""
    out = PredictionSet(name="demo")
    for sample in benchmark:
        image = images[sample.meta["image_id"]]
        for prompt in sample.prompts:
            res = model.segment(image, SegmentRequest(text=prompt.text, role=str(Role.VOCABULARY)))
            inst = [Instance(mask=m, score=float(s), label=prompt.text)
                    for m, s in zip(res.masks, res.scores, strict=True)]
            out.add(Prediction(prompt.id, inst, presence=res.presence))
    return out


def write_ovs(out: Path, seed: int, model: Segmenter) -> None:
    """Write ann.json, pred.json and images/ into ``out`` (an empty directory)."""
    rng = np.random.default_rng(seed)
    ids = {name: k + 1 for k, name in enumerate(VOCABULARY)}
    (out / "images").mkdir(parents=True, exist_ok=True)
    images, anns, pixels = [], [], {}
    for i, (background, kinds) in enumerate(SCENES, start=1):
        scene = _scene(rng, background, kinds)
        rendered = render(scene, seed=seed * 1000 + i)
        rel = f"images/{i:03d}.png"
        save_png(str(out / rel), rendered.image)
        pixels[i] = rendered.image
        images.append({"id": i, "file_name": rel, "height": H, "width": W})
        for name, m in _ground_truth(scene, rendered.modal, rendered.image).items():
            if m.any():
                anns.append({"id": len(anns) + 1, "image_id": i, "category_id": ids[name],
                             "segmentation": Mask.from_array(m).to_coco()})
    vocab = [{"id": ids[n], "name": n} for n in VOCABULARY]
    atomic_write_json(out / "ann.json", {"format": FORMAT, "vocabulary": vocab, "images": images,
                                         "annotations": anns}, indent=None)
    bench = load_ovs_annotations(out / "ann.json")
    write_ovs_predictions(bench, _predictions(model, bench, pixels), out / "pred.json")
