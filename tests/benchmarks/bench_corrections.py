"""Scoring with ground-truth corrections (plain script, run by `make bench`).

Times :func:`masklens.core.review.corrections.corrected_scorer` — the corrections applied and
only the corrected samples' threshold-free stage re-read — against the baseline of a new
Scorer over the whole corrected benchmark (same process, same corrections), on the SA-Co/Gold
demo repeated to ~6,100 samples with 10 corrected samples. This is what the window's
"corrected ground truth" switch runs after each correction.
"""

from __future__ import annotations

import dataclasses
import statistics
import time


def median_ms(fn, repeat: int = 3) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return statistics.median(out)


def main() -> int:
    import numpy as np

    from masklens.core.kinds.demo import demo_namespace
    from masklens.core.masks import Mask
    from masklens.core.review.corrections import Correction, corrected_benchmark, corrected_scorer
    from masklens.core.schema import Benchmark
    from masklens.core.scoring.contract import Scorer, get_kind

    kind = get_kind("pcs")
    ns = demo_namespace("pcs", with_predictions=True)
    demo = kind.load_benchmark(**vars(ns))
    preds = kind.load_predictions(demo, **vars(ns))
    samples = [dataclasses.replace(s, id=f"{s.id}#{r}") for r in range(100) for s in demo.samples]
    bench = Benchmark("pcs", "repeated", samples, sources=demo.sources)
    base = Scorer(kind, bench, preds)
    rows = []
    for i, s in enumerate(samples[:: len(samples) // 10][:10]):
        g = s.gts["gt0"]
        a = np.zeros((g.height, g.width), bool)
        a[: g.height // 2, : g.width // 2] = True
        rows.append(Correction("pcs:repeated", s.id, "gt0", 0 if g.masks else None, Mask.from_array(a),
                               "brush", "ana", f"2026-01-01T00:00:{i:02d}.000Z", "", "", f"u{i}"))
    fast = median_ms(lambda: corrected_scorer(base, rows))
    fixed = corrected_benchmark(bench, rows)
    full = median_ms(lambda: Scorer(kind, fixed, preds))
    assert corrected_scorer(base, rows).rescore().to_json() == Scorer(kind, fixed, preds).rescore().to_json()
    print(f"corrections: {len(samples)} samples, {len(rows)} corrected: corrected_scorer "
          f"{fast:.1f} ms, full stage 1 {full:.1f} ms (baseline), {full / fast:.1f}x faster")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
