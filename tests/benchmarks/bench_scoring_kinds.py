"""First-scoring vs re-scoring time for HalluSegBench, CGEBench and R2SM (plain script, `make bench`).

For each kind a synthetic set of about the published size is written in the kind's own
file format (fixed seed, random ellipses as masks), then, in one process:

* first scoring: load + validate the files, ``Scorer`` (every mask overlap) and the summary;
* re-scoring at new parameters (α for HalluSegBench, t for CGEBench and R2SM) from the
  cached overlaps, best of several runs;
* the ratio re-score / first scoring (target < 1 %).

    python tests/benchmarks/bench_scoring_kinds.py [--scale 1]

At ``--scale 1`` the sets are HalluSegBench's 1,340 pairs, 1,500 CGEBench entries and
700 R2SM images (~4,100 queries; R2SM's COCOA-cls validation split has 12,207). The
default, 0.5, keeps the whole script near a minute on two busy cores; ``--scale`` changes
the number of items only (masks stay 640×480).
"""

from __future__ import annotations

import argparse
import gc
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from masklens.core.masks import Mask
from masklens.core.scoring.contract import Scorer, get_kind

H, W = 480, 640
SEED = 2026


def ellipse(rng: np.random.Generator, jitter_of: tuple[float, ...] | None = None) -> tuple[np.ndarray, tuple]:
    """A filled ellipse mask; with ``jitter_of`` a perturbed copy of that ellipse (a prediction)."""
    if jitter_of is None:
        cx, cy = rng.uniform(40, W - 40), rng.uniform(40, H - 40)
        ax, ay = rng.uniform(6, 150), rng.uniform(6, 120)
    else:
        cx, cy, ax, ay = jitter_of
        s = rng.uniform(0.7, 1.3)
        cx, cy, ax, ay = cx + rng.normal(0, 6), cy + rng.normal(0, 6), ax * s, ay * s
    m = np.zeros((H, W), np.uint8)
    cv2.ellipse(m, (int(cx), int(cy)), (max(int(ax), 1), max(int(ay), 1)), 0, 0, 360, 1, -1)
    return m.astype(bool), (cx, cy, ax, ay)


def rle(m: np.ndarray) -> dict[str, Any]:
    return Mask.from_array(m).to_coco()


def instances(rng: np.random.Generator, target: tuple, n_max: int) -> list[tuple[dict, float]]:
    """Predicted instances: usually one near the target, plus random ones, with random scores."""
    out = []
    for k in range(int(rng.integers(0, n_max + 1))):
        m, _ = ellipse(rng, target if k == 0 and rng.random() < 0.8 else None)
        out.append((rle(m), round(float(rng.uniform(0.05, 1.0)), 4)))
    return out


# ------------------------------------------------------------------ synthetic sets
def synth_hallu(root: Path, n: int, rng: np.random.Generator) -> list[str]:
    """HalluSegBench: ``n`` pairs, GT PNGs and the four official prediction folders."""
    folders = ("orgl_orgi", "orgl_edti", "edtl_orgi", "edtl_edti")
    for sub in ("masks/factual", "masks/counterfactual", *(f"pred/{f}" for f in folders)):
        (root / sub).mkdir(parents=True)
    items = []
    for i in range(n):
        base = f"{i:05d}"
        gt, geom = ellipse(rng)
        png = gt.astype(np.uint8) * 255
        for side in ("factual", "counterfactual"):
            cv2.imwrite(str(root / f"masks/{side}/{base}.png"), png)
        for f in folders:  # the factual query finds the object; others sometimes hallucinate it
            hit = f == "orgl_orgi" or rng.random() < 0.3
            pred = ellipse(rng, geom)[0] if hit else np.zeros((H, W), bool)
            cv2.imwrite(str(root / f"pred/{f}/{base}_{i}_mask.png"), pred.astype(np.uint8) * 255)
        items.append({"ann_id": i, "factual_label": "cat", "counterfactual_label": "dog",
                      "factual_image_path": f"images/factual/{base}.jpg",
                      "counterfactual_image_path": f"images/counterfactual/{base}.jpg",
                      "factual_mask_path": f"masks/factual/{base}.png",
                      "counterfactual_mask_path": f"masks/counterfactual/{base}.png"})
    (root / "data.json").write_text(json.dumps(items))
    return ["--data", str(root / "data.json"), "--root", str(root), "--pred-dir", str(root / "pred")]


def synth_cge(root: Path, n: int, rng: np.random.Generator) -> list[str]:
    """CGEBench: ``n`` entries, 1–3 target instances each, 4 prompt levels of up to 4 instances."""
    root.mkdir(parents=True)
    images, anns, preds = [], [], []
    for i in range(1, n + 1):
        images.append({"id": i, "file_name": f"{i}.jpg", "height": H, "width": W, "text_input": "red car",
                       "hypernyms": ["car", "vehicle", "object"]})
        geoms = []
        for _ in range(int(rng.integers(1, 4))):
            m, g = ellipse(rng)
            geoms.append(g)
            anns.append({"id": len(anns) + 1, "image_id": i, "category_id": 1, "segmentation": rle(m),
                         "iscrowd": 0})
        for level in range(4):
            for seg, s in instances(rng, geoms[int(rng.integers(len(geoms)))], 4):
                preds.append({"image_id": i, "level": level, "segmentation": seg, "score": s})
    (root / "ann.json").write_text(json.dumps({"images": images, "annotations": anns,
                                               "categories": [{"id": 1, "name": "object"}]}))
    (root / "pred.json").write_text(json.dumps(preds))
    return ["--ann", str(root / "ann.json"), "--pred", str(root / "pred.json")]


def synth_r2sm(root: Path, n_images: int, rng: np.random.Generator) -> list[str]:
    """R2SM: ``n_images`` images of 2–4 occluding objects, a modal and an amodal query per object."""
    root.mkdir(parents=True)
    images, anns, queries, preds = [], [], [], []
    for i in range(1, n_images + 1):
        images.append({"id": i, "file_name": f"{i}.jpg", "height": H, "width": W})
        drawn = [ellipse(rng) for _ in range(int(rng.integers(2, 5)))]
        above = np.zeros((H, W), bool)
        for amodal, geom in reversed(drawn):  # later objects occlude earlier ones
            modal = amodal & ~above
            above |= amodal
            aid = len(anns) + 1
            anns.append({"id": aid, "image_id": i, "category_id": 1, "iscrowd": 0,
                         "segmentation": rle(modal), "amodal_segmentation": rle(amodal)})
            for want_amodal in (True, False):
                qid = len(queries) + 1
                queries.append({"id": qid, "image_id": i, "text": "the object", "amodal": want_amodal,
                                "ann_ids": [aid]})
                for seg, s in instances(rng, geom, 4):
                    preds.append({"query_id": qid, "image_id": i, "category_id": 1, "segmentation": seg,
                                  "score": s})
    (root / "ann.json").write_text(json.dumps({"images": images, "annotations": anns, "queries": queries,
                                               "categories": [{"id": 1, "name": "object"}]}))
    (root / "pred.json").write_text(json.dumps(preds))
    return ["--ann", str(root / "ann.json"), "--pred", str(root / "pred.json")]


# ------------------------------------------------------------------ timing
def namespace(kind_name: str, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    get_kind(kind_name).add_arguments(parser)
    return parser.parse_args(argv)


def best_of(n: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(n):
        gc.collect()
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, value


def bench(kind_name: str, argv: list[str], first: dict[str, float], new: dict[str, float],
          size: str) -> bool:
    kind = get_kind(kind_name)
    ns = namespace(kind_name, argv)
    t0 = time.perf_counter()
    bench_ = kind.load_benchmark(**vars(ns))
    preds = kind.load_predictions(bench_, **vars(ns))
    t1 = time.perf_counter()
    scorer = Scorer(kind, bench_, preds)
    scorer.rescore(first)
    t2 = time.perf_counter()
    re_t, _ = best_of(5, lambda: scorer.rescore(new))
    total = t2 - t0
    ratio = re_t / total
    print(f"{kind.title}: {size}")
    print(f"  first scoring     {total:8.3f} s  (load+validate {t1 - t0:.3f} s, overlaps+summary {t2 - t1:.3f} s)")
    print(f"  re-score {new}  {re_t * 1e3:8.2f} ms (best of 5)")
    print(f"  ratio re-score / first  {100 * ratio:.3f} %  (target < 1 %)"
          + ("" if ratio < 0.01 else "  TARGET MISSED"))
    return ratio < 0.01


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.5, help="fraction of the full item counts (default 0.5)")
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    n_hallu, n_cge, n_r2sm = (max(4, int(round(v * args.scale))) for v in (1340, 1500, 700))
    ok = True
    with tempfile.TemporaryDirectory(prefix="masklens-bench-") as tmp:
        root = Path(tmp)
        for kind, synth, n, first, new, what in (
            ("hallusegbench", synth_hallu, n_hallu, {"alpha": 3.0}, {"alpha": 5.0},
             f"{n_hallu} pairs, {6 * n_hallu} PNG masks {W}x{H}"),
            ("cgebench", synth_cge, n_cge, {"score_threshold": 0.5}, {"score_threshold": 0.3},
             f"{n_cge} entries x 4 levels, masks {W}x{H}"),
            ("r2sm", synth_r2sm, n_r2sm, {"score_threshold": 0.0}, {"score_threshold": 0.5},
             f"{n_r2sm} images, masks {W}x{H}"),
        ):
            t = time.perf_counter()
            argv = synth(root / kind, n, rng)
            print(f"({kind} set written in {time.perf_counter() - t:.1f} s)")
            ok &= bench(kind, argv, first, new, what)
    print("targets met" if ok else "TARGET MISSED")


if __name__ == "__main__":
    main()
