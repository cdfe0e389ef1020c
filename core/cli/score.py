"""`masklens score KIND …`: score a whole benchmark headless."""

from __future__ import annotations

import argparse
import sys

from masklens.core.cli import kind_parsers
from masklens.core.io import atomic_write_json_fast
from masklens.core.paths import add_flag
from masklens.core.scoring import BenchmarkKind, Scorer, get_kind
from masklens.core.tables import format_summary


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
        add_param_flags(p, kind)
        p.add_argument("--out", help="write JSON results here (default: a table on stdout)")
        p.add_argument("--pretty", action="store_true", help="indent the --out JSON (default compact)")
        add_flag(p)
        p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    kind = get_kind(args.kind)
    params = {p.name: getattr(args, p.name, None) for p in kind.params}
    resolved = kind.resolve_params(params)
    benchmark = kind.load_benchmark(args)
    predictions = kind.load_predictions(args, benchmark)
    result = Scorer(kind, benchmark, predictions).rescore(resolved)
    if args.out:
        atomic_write_json_fast(args.out, result.to_json(), pretty=args.pretty)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(format_summary(result, kind))
    return 0
