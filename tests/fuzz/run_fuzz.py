"""`make fuzz`: the full mutation fuzzer; prints the outcome table and every failing run.

    python tests/fuzz/run_fuzz.py [--runs-per-kind N] [--report-runs N] [--predict-runs N] [--seed S]
                                  [--big-mb MB]

Exit status 1 when any run ended in a traceback, a signal, a hang, an unclean error, a lost
previous output, a wrongly typed id taken as valid or a read outside the input root (the last
one not with --no-strict-root, for a branch without the guarded resolver core/files/paths.py).
"""

from __future__ import annotations

import argparse
import sys
import time

from fuzz_runner import FAILING, plan, run_many, table


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs-per-kind", type=int, default=300)
    ap.add_argument("--report-runs", type=int, default=300)
    ap.add_argument("--predict-runs", type=int, default=100,
                    help="`predict --model demo` runs: hostile image names and hf:// paths")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--big-mb", type=int, default=200, help="size of the big-JSON mutation")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-strict-root", dest="strict_root", action="store_false",
                    help="do not fail on reads outside the input root (a branch without core/files/paths.py)")
    args = ap.parse_args()
    start = time.time()
    done = [0]

    def progress(o):
        done[0] += 1
        if o.outcome in FAILING or (args.strict_root and o.outcome == "outside root"):
            print(o.line(), file=sys.stderr, flush=True)
        if done[0] % 100 == 0:
            print(f"... {done[0]} runs, {time.time() - start:.0f} s", file=sys.stderr, flush=True)

    jobs = plan(args.runs_per_kind, args.report_runs, args.predict_runs)
    outcomes = run_many(jobs, seed=args.seed, big_mb=args.big_mb, workers=args.workers, progress=progress)
    print(table(outcomes))
    print(f"{len(outcomes)} runs in {time.time() - start:.0f} s (seed {args.seed})")
    failing = set(FAILING) | ({"outside root"} if args.strict_root else set())
    return int(any(o.outcome in failing for o in outcomes))


if __name__ == "__main__":
    sys.exit(main())
