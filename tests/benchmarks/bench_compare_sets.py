"""Compare-sets browser rows (plain script, run by `make bench`; offscreen Qt, no window).

Times :func:`masklens.gui.compare.sets.compare_rows` — the ``compare.*`` columns and the
fixed/broken change for two prediction sets — on 10,000 and 100,000 CAFE readouts (the demo's
records repeated), flattening only the entries the failure filter reads, against the baseline of
flattening every record in full (same process, same records). This runs on every slider move
while two or more sets are compared.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def median_ms(fn, repeat: int = 3) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return statistics.median(out)


def main() -> int:
    from masklens.core.kinds.demo import demo_namespace
    from masklens.core.scoring.contract import get_kind, score
    from masklens.gui.browser.filters import flatten, presets_for
    from masklens.gui.compare.sets import compare_rows

    kind = get_kind("cafe")
    ns = demo_namespace("cafe", with_predictions=True)
    bench = kind.load_benchmark(**vars(ns))
    preds = kind.load_predictions(bench, **vars(ns))
    recs = score(kind, bench, preds).samples
    crit = next(f for f in presets_for("cafe", list(flatten(recs[0]))) if f.label == "negative prompt is TA-FP")
    print("compare sets: browser rows for two sets (failure: negative prompt is TA-FP)")
    for n in (10_000, 100_000):
        reps = n // len(recs) + 1
        a = (recs * reps)[:n]
        b = [dict(r) for r in a]
        samples = (bench.samples * reps)[:n]
        fast = median_ms(lambda a=a, b=b, s=samples: compare_rows(s, [a, b], crit))
        full = median_ms(lambda a=a, b=b, s=samples: compare_rows(s, [a, b], crit, only_needed=False), repeat=1)
        print(f"  {n:>7,} samples: {fast:8.1f} ms  (flatten every record: {full:8.1f} ms; "
              f"ratio {full / fast:5.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
