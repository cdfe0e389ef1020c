"""`masklens score KIND …`: score a whole benchmark headless."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from masklens.core.cli import kind_parsers
from masklens.core.files.paths import add_flag
from masklens.core.scoring.contract import BenchmarkKind, get_kind
from masklens.core.scoring.tables import format_summary


def add_param_flags(parser: argparse.ArgumentParser, kind: BenchmarkKind) -> None:
    for p in kind.params:
        parser.add_argument(
            p.flag,
            dest=p.name,
            type=float,
            default=None,
            metavar=p.symbol or "X",
            help=f"{p.help} (default {p.default:g})",
        )


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("score", help="score predictions against a benchmark")
    for kind, p in kind_parsers(parser, "score"):
        kind.add_arguments(p)
        # --demo stands for the kind's files: they are required only without it (checked in run)
        needed = [a for a in p._actions if a.required]
        for action in needed:
            action.required = False
        p.add_argument("--demo", action="store_true",
                       help="score the bundled demo of the kind (instead of its files)")
        p.set_defaults(needed_files={a.dest: a.option_strings[0] for a in needed})
        add_param_flags(p, kind)
        p.add_argument("--out", help="write JSON results here (default: a table on stdout)")
        p.add_argument("--pretty", action="store_true", help="indent the --out JSON (default compact)")
        p.add_argument("--corrections", action="append", metavar="DB",
                       help="score against the ground truth with these review databases' "
                       "corrections applied (repeatable; see `masklens review apply`)")
        add_flag(p)
        p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from masklens.core import api
    from masklens.core.scoring.kind_args import kind_files

    kind = get_kind(args.kind)
    params = {p.name: getattr(args, p.name) for p in kind.params if getattr(args, p.name, None) is not None}
    if args.demo:
        from masklens.core.kinds.demo import demo_files

        files: dict[str, Any] = demo_files(kind.name)
    else:
        missing = [flag for dest, flag in args.needed_files.items() if getattr(args, dest, None) is None]
        if missing:
            print(f"masklens score {kind.name}: error: the following arguments are required: "
                  f"{', '.join(missing)} (or --demo)", file=sys.stderr)
            return 2
        files = kind_files(kind, args)
    if args.out:  # the review stores it reads are inputs too
        from masklens.core.files.output_dirs import refuse_inputs

        refuse_inputs(args.out, getattr(args, "corrections", None) or [])
    benchmark = None
    if getattr(args, "corrections", None):
        from masklens.core.review.apply import store_corrections
        from masklens.core.review.corrections import corrected_benchmark
        from masklens.core.review.locations import benchmark_key

        benchmark = api.load_benchmark(kind, **files)
        benchmark = corrected_benchmark(benchmark, store_corrections(args.corrections, benchmark_key(benchmark)))
    result = api.score(kind, benchmark, out=args.out, pretty=args.pretty, **files, **params)
    if args.out:
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(format_summary(result, kind))
    return 0
