"""`masklens report KIND <benchmark args> --pred P [--pred P2 …] [--reviews DB] --out DIR`."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from masklens.core import api
from masklens.core.cli import kind_parsers
from masklens.core.errors import MasklensError
from masklens.core.files.paths import add_flag
from masklens.core.scoring.contract import BenchmarkKind, get_kind
from masklens.core.scoring.kind_args import kind_files

if TYPE_CHECKING:
    from tqdm import tqdm


def prediction_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The kind's prediction inputs (destinations ``pred…``: ``--pred``, ``--pred-dir``)."""
    return [a for a in parser._actions if a.dest.startswith("pred") and a.option_strings]


def add_repeatable_predictions(parser: argparse.ArgumentParser, kind: BenchmarkKind) -> list[str]:
    """Add the kind's arguments, its prediction inputs made repeatable (one per model)."""
    kind.add_arguments(parser)
    dests = []
    for a in prediction_actions(parser):
        if type(a) is argparse._StoreAction and a.nargs is None:
            # same fields; appends instead of replacing (mypy does not follow a class change)
            a.__class__ = argparse._AppendAction  # type: ignore[assignment]
            a.help = f"{a.help or ''} (repeat for several models)".strip()
            dests.append(a.dest)
    return dests


def load_prediction_sets(kind: BenchmarkKind, args: argparse.Namespace, benchmark, dests):
    """One PredictionSet per repeated prediction argument (the kind's loader reads each)."""
    given = {d: getattr(args, d) for d in dests if getattr(args, d, None)}
    if not given:
        flags = ", ".join("--" + d.replace("_", "-") for d in dests)
        raise MasklensError(f"no predictions given ({flags})")
    n = max(len(v) for v in given.values())
    if any(len(v) not in (1, n) for v in given.values()):
        raise MasklensError("repeat each prediction argument once per model, in the same order")
    sets = []
    for i in range(n):
        files = {d: values[i] if len(values) == n else values[0] for d, values in given.items()}
        sets.append(api.load_predictions(kind, benchmark, **files))
    labels = list(getattr(args, "label", None) or [])
    if labels and len(labels) != n:
        raise MasklensError(f"--label given {len(labels)} times for {n} prediction sets")
    if not labels:
        first = next(iter(given.values()))
        labels = [Path(str(first[i] if len(first) == n else first[0]).rstrip("/")).stem
                  for i in range(n)]
    return sets, labels


def load_verdicts(paths: list[str], benchmark) -> list:
    """Current verdicts of the benchmark from one or more review databases."""
    from masklens.core.review.locations import benchmark_key
    from masklens.core.review.store import Role, open_store

    key = benchmark_key(benchmark)
    out = []
    for p in paths or []:
        with open_store(p, Role.READ) as st:  # missing, 0-byte or foreign files are errors
            vs = st.current(key)
            keys = st.benchmarks()
            if not vs and len(keys) == 1:  # a store of one benchmark under another name
                vs = st.current(keys[0])
            out += vs
    seen, unique = set(), []
    for v in out:  # the same verdict merged into several files counts once
        if v.uid not in seen:
            seen.add(v.uid)
            unique.append(v)
    return unique


def load_corrections(paths: list[str], benchmark) -> list:
    """The benchmark's effective ground-truth corrections in the review databases, checked as
    `review apply` and `score --corrections` check them (a correction naming a sample, ground
    truth or instance the benchmark does not have is an error)."""
    from masklens.core.review.apply import store_corrections
    from masklens.core.review.corrections import corrected_benchmark
    from masklens.core.review.locations import benchmark_key

    rows = store_corrections(paths or [], benchmark_key(benchmark))
    if rows:
        corrected_benchmark(benchmark, rows)
    return rows


def register(sub: argparse._SubParsersAction) -> None:
    from masklens.core.cli.score import add_param_flags

    parser = sub.add_parser("report", help="write an HTML/CSV/JSON report of one or more models")
    for kind, p in kind_parsers(parser, "report on"):
        dests = add_repeatable_predictions(p, kind)
        add_param_flags(p, kind)
        g = p.add_argument_group("report")
        g.add_argument("--label", action="append", help="model name for each prediction set (in order)")
        g.add_argument("--reviews", action="append", metavar="DB",
                       help="reviewers' verdicts and ground-truth corrections (SQLite written by "
                       "masklens; repeatable): corrections add a section with the metrics before/after")
        if "--images" not in p._option_string_actions:
            g.add_argument("--images", metavar="DIR", help="image folder for the failure gallery")
        g.add_argument("--title", help="report title")
        g.add_argument("--gallery", type=_count, default=4, metavar="N",
                       help="worst failures shown per failure kind and model (default 4)")
        g.add_argument("--no-sweep", action="store_true", help="skip the threshold sweep")
        g.add_argument("--out", required=True, metavar="DIR", help="report folder (new, empty, or one masklens wrote: replaced atomically)")
        add_flag(p)
        p.set_defaults(func=run, prediction_dests=dests)


def _count(text: str) -> int:
    """A whole number ≥ 0 (anything else: argparse's one-line usage error)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expects a whole number ≥ 0, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from masklens.core.files.output_dirs import check_replaceable
    from masklens.core.reports import ReportOptions, build_report

    kind = get_kind(args.kind)
    params = kind.resolve_params({p.name: getattr(args, p.name, None) for p in kind.params})
    files = kind_files(kind, args)
    inputs = [*files.values(), *(getattr(args, d, None) for d in args.prediction_dests),
              args.reviews, getattr(args, "images", None)]
    checked = check_replaceable(args.out, inputs=inputs)  # before loading anything
    benchmark = api.load_benchmark(kind, **files)
    sets, labels = load_prediction_sets(kind, args, benchmark, args.prediction_dests)
    verdicts = load_verdicts(args.reviews, benchmark)
    corrections = load_corrections(args.reviews, benchmark)
    opts = ReportOptions(
        title=args.title, images_dir=getattr(args, "images", None), gallery_per_kind=args.gallery,
        sweep=not args.no_sweep, command="masklens " + shlex.join(sys.argv[1:]), inputs=inputs,
        out_checked=checked,
    )
    bar = _StageBar()
    try:
        out = build_report(kind, benchmark, sets, args.out, params=params, names=labels,
                           verdicts=verdicts, corrections=corrections, options=opts, progress=bar)
    finally:
        bar.close()
    print(f"wrote {out}/report.html (+ summary.csv, samples.csv, summary.json, tables.tex, figures/)",
          file=sys.stderr)
    return 0


class _StageBar:
    """A tqdm bar on stderr for the scoring stage, then one line per later stage."""

    def __init__(self) -> None:
        self.bar: tqdm | None = None
        self.stage = ""

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage == "scoring":
            if self.bar is None:
                from tqdm import tqdm

                self.bar = tqdm(total=total, desc="scoring", unit="sample", file=sys.stderr,
                                dynamic_ncols=True, disable=None)
            self.bar.update(done - self.bar.n)
            return
        if stage != self.stage:
            self.close()
            self.stage = stage

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
