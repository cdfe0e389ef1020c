"""CAFE scoring speed and memory (run by `make bench`; a plain script, not a test).

Builds a CAFE-shaped synthetic set (2,146 pairs, 1024×1024 masks as RLE, up to 5
instances per prompt, fixed seed), then prints, in one process:

* masklens: time of a first full scoring from the files (load + ``Scorer`` + summary,
  which also builds the cgF1 tables) and of a re-score at new (t, τ);
* a straightforward per-pair pycocotools baseline written here (json.load, one
  ``maskUtils.iou`` per prompt, classification in Python, CAFE rates only);
* the ratios, and peak traced memory of a first scoring against the RLE bytes and
  against what the decoded masks would take.

Targets: first scoring at least as fast as the baseline; re-scoring < 1 % of the
first scoring; memory proportional to the RLE, not to decoded masks.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
import tracemalloc
from collections import defaultdict
from pathlib import Path

import numpy as np
from pycocotools import mask as mask_utils

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cafe"))
from cafe_synth import synth_cafe  # noqa: E402

from masklens.core.kinds.cafe.kind import KIND  # noqa: E402
from masklens.core.scoring.contract import Scorer  # noqa: E402

N_PAIRS, SIZE, MAX_INST, SEED = 2146, 1024, 5, 2026
EDIT = {"Superficial Mimicry": "SM", "Context Conflict": "CC", "Ontological Conflict": "OC"}


def masklens_load(ann: Path, pred: Path):
    args = argparse.Namespace(ann=str(ann), pred=str(pred), images=None)
    bench = KIND.load_benchmark(**vars(args))
    return bench, KIND.load_predictions(bench, **vars(args))


def masklens_score(loaded) -> Scorer:
    scorer = Scorer(KIND, *loaded)
    scorer.rescore({"score_threshold": 0.5, "iou_threshold": 0.3})
    return scorer


def baseline_parse(ann: Path, pred: Path):
    data = json.loads(ann.read_text())
    by_img: dict[int, list[dict]] = defaultdict(list)
    for p in json.loads(pred.read_text()):
        by_img[p["image_id"]].append(p)
    return data, by_img


def baseline_score(parsed, t: float, tau: float) -> dict[str, dict[str, float]]:
    """What one would write by hand: per pair, maskUtils.iou per prompt, classify in Python."""
    data, by_img = parsed
    target: dict[int, dict] = {}
    for a in data["annotations"]:
        target.setdefault(a["image_id"], a["segmentation"])
    rows = []
    for im in data["images"]:
        if "fp_source_id" not in im or im["fp_source_id"] not in target:
            continue
        tgt = target[im["fp_source_id"]]
        tgt = {"size": tgt["size"], "counts": tgt["counts"].encode()}
        flags = []
        for image_id in (im["fp_source_id"], im["id"]):
            ps = by_img.get(image_id, [])
            rles = [
                {"size": p["segmentation"]["size"], "counts": p["segmentation"]["counts"].encode()}
                for p in ps
            ]
            ious = np.asarray(mask_utils.iou(rles, [tgt], [0])).reshape(-1) if rles else np.zeros(0)
            scores = np.array([p["score"] for p in ps])
            flags.append((scores, ious))
        (ps_, pi), (ns, ni) = flags
        tp = bool(((ps_ >= t) & (pi >= tau)).any())
        a = bool(((ns >= t) & (ni >= tau)).any())
        u = bool(((ns >= t) & (ni < tau)).any())
        soft = (ns.max() if ns.size else 0.0) > (ps_.max() if ps_.size else 0.0)
        rows.append(
            (
                EDIT[im["edit_type"]],
                tp,
                a,
                (not a) and u,
                (not tp) and a,
                (not tp) and (not a) and u,
                soft,
            )
        )
    out = {}
    for g in ("Overall", "SM", "CC", "OC"):
        sel = [r for r in rows if g == "Overall" or r[0] == g]
        n = len(sel)
        afpr, ufpr = sum(r[2] for r in sel) / n, sum(r[3] for r in sel) / n
        out[g] = {"N": n, "TA_TP": sum(r[1] for r in sel), "AFPR": afpr, "UFPR": ufpr, "IL_FPR": afpr + ufpr,
                  "ACSR": sum(r[4] for r in sel) / n, "UCSR": sum(r[5] for r in sel) / n,
                  "SoftSwap": sum(r[6] for r in sel) / n}  # fmt: skip
    return out


def timed(fn):
    gc.collect()
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def best_of(n: int, fn):
    best, value = float("inf"), None
    for _ in range(n):
        gc.collect()
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, value


def main() -> None:
    t0 = time.perf_counter()
    ann_data, preds = synth_cafe(
        SEED, N_PAIRS, height=SIZE, width=SIZE, max_instances=MAX_INST, p_polygon_gt=0
    )
    n_masks = len(ann_data["annotations"]) + len(preds)
    rle_bytes = sum(len(a["segmentation"]["counts"]) for a in ann_data["annotations"]) + sum(
        len(p["segmentation"]["counts"]) for p in preds
    )
    tmp = Path(tempfile.mkdtemp(prefix="masklens-bench-"))
    ann, pred = tmp / "ann.json", tmp / "pred.json"
    ann.write_text(json.dumps(ann_data))
    pred.write_text(json.dumps(preds))
    del ann_data, preds
    print(f"synthetic CAFE: {N_PAIRS} pairs, {n_masks} masks {SIZE}x{SIZE}, "
          f"{rle_bytes / 1e6:.1f} MB of RLE counts (built in {time.perf_counter() - t0:.1f} s)")  # fmt: skip

    reps = 5  # interleaved (masklens, baseline, …) so machine load hits both alike; best of each
    best = {"ml_load": 9e9, "ml_score": 9e9, "bl_parse": 9e9, "bl_score": 9e9}
    for _ in range(reps):
        t, loaded = timed(lambda: masklens_load(ann, pred))
        best["ml_load"] = min(best["ml_load"], t)
        t, scorer = timed(lambda: masklens_score(loaded))  # noqa: B023
        best["ml_score"] = min(best["ml_score"], t)
        t, parsed = timed(lambda: baseline_parse(ann, pred))
        best["bl_parse"] = min(best["bl_parse"], t)
        t, bl = timed(lambda: baseline_score(parsed, 0.5, 0.3))  # noqa: B023
        best["bl_score"] = min(best["bl_score"], t)
    # a slider drag: 30 moves, each to a (t, τ) this scorer has not seen yet (no cached
    # codes for it); the median move is what the target is judged on
    moves = [{"score_threshold": round(0.35 + 0.01 * i, 4), "iou_threshold": round(0.6 - 0.005 * i, 4)}
             for i in range(30)]  # fmt: skip
    gc.collect()  # once: a slider does not run a full collection before every move
    times = []
    for params in moves:
        t0 = time.perf_counter()
        scorer.rescore(params)
        times.append(time.perf_counter() - t0)
    re_t, re_best = float(np.median(times)), min(times)
    new = {"score_threshold": 0.35, "iou_threshold": 0.6}
    res = scorer.rescore(new)
    bl_re, bl_new = timed(lambda: baseline_score(parsed, 0.35, 0.6))
    first = scorer.rescore({"score_threshold": 0.5, "iou_threshold": 0.3}).summary["Overall"]
    for key in ("N", "TA_TP", "AFPR", "UFPR", "IL_FPR", "ACSR", "UCSR", "SoftSwap"):
        assert abs(first[key] - bl["Overall"][key]) < 1e-12, key
        assert abs(res.summary["Overall"][key] - bl_new["Overall"][key]) < 1e-12, key

    ml_total = best["ml_load"] + best["ml_score"]
    bl_total = best["bl_parse"] + best["bl_score"]
    print(f"scoring stage (from loaded data; best of {reps}, interleaved)")
    print(
        f"  masklens Scorer, first    {best['ml_score']:8.3f} s  (IoUs, cgF1 tables, records, summary incl. cgF1)"
    )
    print(
        f"  baseline per-pair loop    {best['bl_score']:8.3f} s  (two maskUtils.iou calls per pair, CAFE rates only)"
    )
    print(f"  ratio baseline / masklens {best['bl_score'] / best['ml_score']:8.2f}   (target >= 1)")
    print("end to end (from the JSON files)")
    print(
        f"  masklens load + score     {ml_total:8.3f} s  (load, RLE validation, objects {best['ml_load']:.3f} s)"
    )
    print(
        f"  baseline parse + score    {bl_total:8.3f} s  (json.loads {best['bl_parse']:.3f} s, validates nothing)"
    )
    print(f"  ratio baseline / masklens {bl_total / ml_total:8.2f}")
    print(
        f"re-score at new (t, τ)      {re_t * 1e3:8.2f} ms (median of 30 new (t, τ), best "
        f"{re_best * 1e3:.2f} ms; records + summary + cgF1)"
    )
    print(f"  vs first scoring stage    {100 * re_t / best['ml_score']:8.3f} %  (target < 1 %)")
    print(f"  vs first end to end       {100 * re_t / ml_total:8.3f} %")
    print(f"baseline re-score           {bl_re:8.3f} s  (recomputes every IoU)")
    ok_speed = best["bl_score"] / best["ml_score"] >= 1
    ok_rescore = re_t / best["ml_score"] < 0.01

    del scorer
    gc.collect()
    tracemalloc.start()
    scorer = masklens_score(masklens_load(ann, pred))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    kept = sum(
        len(i.mask.rle["counts"])
        for p in scorer.predictions.by_prompt.values()
        for i in p.instances
    )
    decoded = n_masks * SIZE * SIZE
    print(f"peak traced memory          {peak / 1e6:8.1f} MB = {peak / rle_bytes:.1f} x RLE bytes "
          f"({rle_bytes / 1e6:.1f} MB); decoded masks would be {decoded / 1e9:.1f} GB "
          f"({peak / decoded:.4f} of it); prediction RLE kept {kept / 1e6:.1f} MB")  # fmt: skip
    print(f"targets: scoring stage >= baseline {'met' if ok_speed else 'MISSED'}; "
          f"re-score < 1 % {'met' if ok_rescore else 'MISSED'}")  # fmt: skip


if __name__ == "__main__":
    main()
