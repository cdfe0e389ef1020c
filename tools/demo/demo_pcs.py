"""SA-Co/Gold-style (PCS) part of the demo: one entry per (image, noun phrase), three annotators.

Writes ``images/``, ``gold_annotator_{1,2,3}.json`` (the same entries; annotator 1
traces exact masks, annotator 2 traces 1 px outside, annotator 3 traces 1 px
inside and skips instances under 700 px) and the demo model's ``pred_demo.json``.
Noun phrases are built from the scene's true attributes; some name absent
concepts (negative entries with no annotations). One entry is marked
``is_instance_exhaustive: false``.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from demo_common import (
    CATEGORIES,
    COLOURS,
    SIZE,
    coco_annotation,
    coco_image,
    predict,
    result_records,
    write_json,
)
from demo_scenes import Scene, Shape, place, render, save_png

from masklens.core.models.base import Segmenter

N_IMAGES = 8
KINDS = ("circle", "square", "triangle", "star")


def _scene(rng: np.random.Generator) -> Scene:
    scene = Scene(SIZE, SIZE, str(rng.choice(["plain", "plain", "sky", "grass"])))
    n = int(rng.integers(4, 7))
    for _ in range(n):
        size = float(rng.uniform(16, 38))
        cx, cy = place(rng, scene, size, avoid=scene.shapes, margin=14)
        texture = str(rng.choice(["none", "none", "stripes", "spots"]))
        colour = "white" if texture != "none" and rng.random() < 0.5 else str(rng.choice(COLOURS))
        scene.shapes.append(Shape(str(rng.choice(KINDS)), colour, cx, cy, round(size, 1),
                                  texture=texture, density=float(rng.choice([0.4, 0.7, 1.0]))))
    return scene


def _phrases(rng: np.random.Generator, scene: Scene) -> list[tuple[str, dict]]:
    """Noun phrases with the attribute filter that defines their ground truth."""
    present = scene.shapes
    a = present[int(rng.integers(len(present)))]
    b = present[int(rng.integers(len(present)))]
    out = [
        (f"{a.colour} {a.kind}", {"colour": a.colour, "kind": a.kind}),
        (f"{b.kind}", {"kind": b.kind}),
        (f"{a.colour} shape", {"colour": a.colour}),
    ]
    textured = [s for s in present if s.texture != "none"]
    if textured:
        t = textured[0]
        word = "striped" if t.texture == "stripes" else "spotted"
        out.append((f"{word} {t.kind}", {"texture": t.texture, "kind": t.kind}))
    if textured:  # a pattern that looks like an animal to a shortcut-taking model: no animal here
        t = textured[-1]
        out.append(({"stripes": "zebra", "spots": "dalmatian"}[t.texture], {"none": True}))
    if rng.random() < 0.5:
        out.append(("object", {}))
    used = {(s.colour, s.kind) for s in present}
    absent = [(c, k) for c in COLOURS for k in KINDS if (c, k) not in used]
    c, k = absent[int(rng.integers(len(absent)))]
    out.append((f"{c} {k}", {"colour": c, "kind": k}))
    out.append(("giraffe", {"none": True}))
    return out


def _matches(shape: Shape, spec: dict) -> bool:
    if spec.get("none"):
        return False
    return all(getattr(shape, key) == value for key, value in spec.items())


def _annotator(mask: np.ndarray, who: int) -> np.ndarray | None:
    u8 = mask.astype(np.uint8)
    if who == 2:
        return cv2.dilate(u8, np.ones((3, 3), np.uint8)).astype(bool)
    if who == 3:
        if mask.sum() < 700:
            return None
        return cv2.erode(u8, np.ones((3, 3), np.uint8)).astype(bool)
    return mask


def write_pcs(out: Path, seed: int, model: Segmenter) -> None:
    """Write the SA-Co/Gold-style demo into ``out`` (an empty directory)."""
    rng = np.random.default_rng(seed)
    (out / "images").mkdir(parents=True, exist_ok=True)
    images: list[dict] = []
    anns: dict[int, list[dict]] = {1: [], 2: [], 3: []}
    results: list[dict] = []
    entry = 0
    for i in range(1, N_IMAGES + 1):
        scene = _scene(rng)
        rendered = render(scene, seed=seed * 1000 + i)
        name = f"{i:04d}.png"
        save_png(str(out / "images" / name), rendered.image)
        for text, spec in _phrases(rng, scene):
            entry += 1
            images.append(coco_image(entry, name, text_input=text,
                                     is_instance_exhaustive=entry != 3))
            for shape, mask in zip(scene.shapes, rendered.modal, strict=True):
                if not _matches(shape, spec):
                    continue
                for who in anns:
                    m = _annotator(mask, who)
                    if m is not None:
                        anns[who].append(coco_annotation(len(anns[who]) + 1, entry, m))
            results += result_records(predict(model, rendered.image, text), image_id=entry)
    for who, records in anns.items():
        write_json(out / f"gold_annotator_{who}.json", {
            "info": {"description": f"masklens demo SA-Co/Gold-style set, annotator {who}"},
            "images": images, "annotations": records, "categories": CATEGORIES,
        })
    write_json(out / "pred_demo.json", results)
