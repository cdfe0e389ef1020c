"""The OVS part of the bundled demo: procedurally drawn scenes, a vocabulary with near-synonyms,
ground truth and a synthetic model's score maps, in the masklens OVS format (docs/formats/ovs.md).

The synthetic model confuses near-synonyms ("grass"/"lawn", "circle"/"disc"/"ball",
"square"/"box", "triangle"/"pyramid") with high overlap, so the protocol finds
out-matched pairs and the ambiguity graph has meaningful communities; it also
hallucinates faint blobs of absent classes (err) and predicts some objects weakly
(front drops at high thresholds). Deterministic for a given seed.

    python packaging/demo_ovs.py [OUT_DIR] [--seed N]     (default resources/demo/ovs, seed 0)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

VOCABULARY = [
    "sky", "grass", "lawn", "circle", "disc", "ball", "square", "box",
    "triangle", "pyramid", "star", "road",
]
SYNONYMS = {"grass": ["lawn"], "circle": ["disc", "ball"], "square": ["box"], "triangle": ["pyramid"]}
COLOURS = {"circle": (40, 40, 220), "square": (200, 90, 30), "triangle": (30, 200, 220), "star": (200, 40, 200)}
H, W = 96, 128
N_IMAGES = 8


def _shape_mask(kind: str, cx: int, cy: int, r: int) -> np.ndarray:
    import cv2

    m = np.zeros((H, W), np.uint8)
    if kind == "circle":
        cv2.circle(m, (cx, cy), r, 1, -1)
    elif kind == "square":
        cv2.rectangle(m, (cx - r, cy - r), (cx + r, cy + r), 1, -1)
    elif kind == "triangle":
        pts = np.array([[cx, cy - r], [cx - r, cy + r], [cx + r, cy + r]], np.int32)
        cv2.fillPoly(m, [pts], 1)
    else:  # star
        ang = np.arange(10) * np.pi / 5 - np.pi / 2
        rad = np.where(np.arange(10) % 2 == 0, r, r * 0.45)
        pts = np.stack([cx + rad * np.cos(ang), cy + rad * np.sin(ang)], 1).round().astype(np.int32)
        cv2.fillPoly(m, [pts], 1)
    return m.astype(bool)


def _scene(rng: np.random.Generator) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """An RGB image and its ground truth: one mask per class (classes are disjoint)."""
    horizon = int(rng.integers(30, 50))
    sky = np.zeros((H, W), bool)
    sky[:horizon] = True
    grass = ~sky
    image = np.zeros((H, W, 3), np.uint8)
    image[sky] = (235, 200, 140)
    image[grass] = (60, 170, 60)
    gt: dict[str, np.ndarray] = {"sky": sky, "grass": grass}
    kinds = rng.choice(list(COLOURS), size=int(rng.integers(2, 4)), replace=False)
    for j, kind in enumerate(kinds):
        cx = int(16 + (j + 0.5) * (W - 32) / len(kinds) + rng.integers(-6, 7))
        cy = int(rng.integers(30, H - 20))
        m = _shape_mask(str(kind), cx, cy, int(rng.integers(9, 15)))
        for other in gt.values():
            other &= ~m
        gt[str(kind)] = m
        image[m] = COLOURS[str(kind)]
    noise = rng.integers(-12, 13, size=image.shape)
    return np.clip(image.astype(int) + noise, 0, 255).astype(np.uint8), gt


def _dilate(m: np.ndarray, px: int) -> np.ndarray:
    import cv2

    return cv2.dilate(m.astype(np.uint8), np.ones((2 * px + 1, 2 * px + 1), np.uint8)).astype(bool)


def _score_maps(rng: np.random.Generator, gt: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The synthetic model: uint8 score maps (v/255) per predicted class."""
    maps: dict[str, np.ndarray] = {}

    def put(name: str, mask: np.ndarray, level: float) -> None:
        cur = maps.setdefault(name, np.zeros((H, W), np.float64))
        np.maximum(cur, np.where(mask, level, 0.0), out=cur)

    for name, m in gt.items():
        level = float(rng.uniform(0.45, 0.95))
        put(name, _dilate(m, 2) & ~m, level * 0.45)  # a soft rim: too large at low τ
        put(name, m, level)
        for syn in SYNONYMS.get(name, []):
            if rng.random() < 0.7:  # a near-synonym with high overlap, a bit weaker
                put(syn, _dilate(m, 1) if rng.random() < 0.5 else m, level - float(rng.uniform(0.05, 0.3)))
    absent = [v for v in VOCABULARY if v not in gt and not any(v in SYNONYMS.get(g, []) for g in gt)]
    for _ in range(int(rng.integers(1, 3))):  # faint hallucinated blobs of absent classes
        blob = np.zeros((H, W), bool)
        cx, cy, r = int(rng.integers(10, W - 10)), int(rng.integers(10, H - 10)), int(rng.integers(5, 12))
        yy, xx = np.ogrid[:H, :W]
        blob[(yy - cy) ** 2 + (xx - cx) ** 2 <= r * r] = True
        put(str(rng.choice(absent)), blob, float(rng.uniform(0.15, 0.55)))
    return {n: np.clip(np.rint(s * 255), 0, 255).astype(np.uint8) for n, s in maps.items()}


def write_ovs_demo(out_dir: Path, seed: int) -> None:
    """Write ann.json, pred.json, images/ and maps/ into ``out_dir`` (replaced atomically)."""
    import cv2

    from masklens.core.io import atomic_directory, atomic_write_json
    from masklens.core.masks import Mask

    rng = np.random.default_rng(seed)
    ids = {name: k + 1 for k, name in enumerate(VOCABULARY)}
    images, anns, preds = [], [], []
    with atomic_directory(out_dir) as tmp:
        (tmp / "images").mkdir()
        (tmp / "maps").mkdir()
        for i in range(1, N_IMAGES + 1):
            image, gt = _scene(rng)
            cv2.imwrite(str(tmp / "images" / f"{i:03d}.png"), image)
            images.append({"id": i, "file_name": f"images/{i:03d}.png", "height": H, "width": W})
            for name, m in gt.items():
                anns.append({"id": len(anns) + 1, "image_id": i, "category_id": ids[name],
                             "segmentation": Mask.from_array(m).to_coco()})
            for name, score in sorted(_score_maps(rng, gt).items()):
                rel = f"maps/{i:03d}_{name}.png"
                cv2.imwrite(str(tmp / rel), score)
                preds.append({"image_id": i, "category_id": ids[name], "score_map": rel})
        vocab = [{"id": ids[n], "name": n} for n in VOCABULARY]
        atomic_write_json(tmp / "ann.json", {"format": "masklens-ovs/1", "vocabulary": vocab,
                                             "images": images, "annotations": anns}, indent=None)
        atomic_write_json(tmp / "pred.json", {"format": "masklens-ovs/1",
                                              "thresholds": [round(k / 10, 1) for k in range(1, 10)],
                                              "predictions": preds}, indent=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(__file__).resolve().parents[1] / "resources" / "demo" / "ovs"
    parser.add_argument("out_dir", nargs="?", type=Path, default=default)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    write_ovs_demo(args.out_dir, args.seed)
    print(f"wrote {args.out_dir}")


if __name__ == "__main__":
    main()
