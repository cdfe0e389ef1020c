"""Report of a CAFE-sized run: 2,146 synthetic pairs at 1024×1024, up to 5 instances per prompt.

Prints, in one process: the time to load + score (the `masklens score` baseline), the time
to build the full report (scoring, paper tables, plots, the t/τ sweep, the failure gallery,
CSV/JSON/HTML written atomically), its ratio to the baseline, the same for two models side by
side, and how many masks were decoded (the report decodes only what its gallery draws).
Target: a one-model report in under 30 s on this machine.

    python tests/benchmarks/bench_report.py [--pairs 2146] [--size 1024]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "cafe"))

from cafe_synth import synth_cafe  # noqa: E402
from pycocotools import mask as mask_utils  # noqa: E402

from masklens.core.masks import Mask  # noqa: E402
from masklens.core.reports import build_report  # noqa: E402
from masklens.core.scoring.contract import Scorer, get_kind  # noqa: E402

DECODES = {"n": 0}


def _count_decodes() -> None:
    real_to_array, real_decode = Mask.to_array, mask_utils.decode

    def to_array(self):  # noqa: ANN001, ANN202
        DECODES["n"] += 1
        return real_to_array(self)

    def decode(rle):  # noqa: ANN001, ANN202 - pycocotools' own decode, used directly elsewhere
        DECODES["n"] += 1 if isinstance(rle, dict) else len(rle)
        return real_decode(rle)

    Mask.to_array = to_array  # type: ignore[method-assign]
    mask_utils.decode = decode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=2146)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--keep", action="store_true", help="keep the generated files and reports")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="masklens-bench-report-"))
    t = time.perf_counter()
    data, preds = synth_cafe(7, args.pairs, height=args.size, width=args.size, max_instances=5)
    (tmp / "ann.json").write_text(json.dumps(data))
    (tmp / "pred_a.json").write_text(json.dumps(preds))
    for k, p in enumerate(preds):  # a second "model": same masks, other confidence
        p["score"] = round((p["score"] * 0.7 + (k % 7) / 10) % 1.0, 4)
    (tmp / "pred_b.json").write_text(json.dumps(preds))
    n_masks = len(data["annotations"]) + len(preds)
    print(f"synthetic CAFE: {args.pairs} pairs, {args.size}×{args.size}, {len(preds)} predicted "
          f"instances per model, {len(data['annotations'])} GT masks "
          f"(generated in {time.perf_counter() - t:.1f} s, not timed)")

    _count_decodes()
    kind = get_kind("cafe")
    ns = argparse.Namespace(ann=str(tmp / "ann.json"), pred=str(tmp / "pred_a.json"), images=None,
                            score_threshold=None, iou_threshold=None)

    # baseline: what `masklens score cafe --out` does
    t0 = time.perf_counter()
    bench = kind.load_benchmark(**vars(ns))
    pa = kind.load_predictions(bench, **vars(ns))
    t_load = time.perf_counter() - t0
    t1 = time.perf_counter()
    result = Scorer(kind, bench, pa).rescore()
    (tmp / "score.json").write_text(json.dumps(result.to_json()))
    t_score = time.perf_counter() - t1
    base = t_load + t_score
    print(f"baseline  load {t_load:6.2f} s + score {t_score:6.2f} s = {base:6.2f} s")

    stages: dict[str, float] = {}
    mark = {"t": time.perf_counter(), "stage": "scoring"}

    def progress(stage: str, done: int, total: int) -> None:
        if stage != mark["stage"]:
            now = time.perf_counter()
            stages[mark["stage"]] = now - mark["t"]
            mark.update(t=now, stage=stage)

    DECODES["n"] = 0
    t2 = time.perf_counter()
    mark["t"] = t2
    build_report(kind, bench, [pa], tmp / "report1", names=["A"], progress=progress)
    stages[mark["stage"]] = time.perf_counter() - mark["t"]
    t_rep = time.perf_counter() - t2
    one_model_decodes = DECODES["n"]
    total = t_load + t_rep
    print(f"report, 1 model: {t_rep:6.2f} s (+ load {t_load:.2f} s = {total:.2f} s; "
          f"{total / base:.2f}× the score baseline)  "
          + "  ".join(f"{k} {v:.2f}s" for k, v in stages.items()))
    print(f"  masks decoded: {one_model_decodes} of {n_masks} (gallery only; scoring and sweep "
          f"work on RLE and cached overlaps)")
    html = (tmp / "report1" / "report.html").stat().st_size
    print(f"  report.html {html / 1e6:.2f} MB, self-contained")

    ns_b = argparse.Namespace(**{**vars(ns), "pred": str(tmp / "pred_b.json")})
    pb = kind.load_predictions(bench, **vars(ns_b))
    DECODES["n"] = 0
    t3 = time.perf_counter()
    build_report(kind, bench, [pa, pb], tmp / "report2", names=["A", "B"])
    t_rep2 = time.perf_counter() - t3
    print(f"report, 2 models side by side: {t_rep2:6.2f} s ({t_rep2 / base:.2f}× the one-model "
          f"score baseline); masks decoded: {DECODES['n']}")
    verdict = "OK" if total < 30 else "SLOW"
    print(f"target: one-model report (load + report) < 30 s: {total:.2f} s {verdict}")
    if args.keep:
        print(f"files in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
