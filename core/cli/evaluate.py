"""`masklens evaluate KIND --model NAME [--model NAME2 …] [--weights …] <benchmark args> --out DIR`.

Runs each model over the benchmark (or the subset chosen with ``--samples`` /
``--group``), answering finished prompts from the prediction cache (Ctrl-C keeps
them; a re-run resumes), writes each model's predictions in the benchmark's own
format and its scores under DIR, and with ``--report`` a report of all models.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from masklens.core.cli import kind_parsers
from masklens.core.errors import MasklensError
from masklens.core.files.paths import add_flag
from masklens.core.scoring.contract import get_kind

if TYPE_CHECKING:
    from tqdm import tqdm


def register(sub: argparse._SubParsersAction) -> None:
    from masklens.core.cli.scale import add_scale_arguments
    from masklens.core.cli.score import add_param_flags
    from masklens.core.models.replay import prediction_actions

    parser = sub.add_parser("evaluate", help="run model(s) over a benchmark, then score them",
                            description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    for kind, p in kind_parsers(parser, "evaluate on"):
        kind.add_arguments(p)
        for a in prediction_actions(p):  # evaluate makes the predictions
            a.required = False
            a.help = argparse.SUPPRESS
        add_param_flags(p, kind)
        if "--images" not in p._option_string_actions:
            p.add_argument("--images", metavar="DIR", help="folder of the benchmark's image files")
        m = p.add_argument_group("models")
        m.add_argument("--model", action="append", required=True, metavar="NAME",
                       help="backend (see `masklens models`); repeat to compare models")
        m.add_argument("--weights", action="append", metavar="PATH_OR_ID",
                       help="checkpoint per --model, in the same order (or one for all)")
        m.add_argument("--label", action="append", help="display name per --model")
        m.add_argument("--device", default=None, metavar="auto|cpu|cuda[:N]|mps",
                       help="where to run every --model (default: auto = cuda, then mps, then cpu)")
        m.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                       help="backend option for every --model (repeatable; VALUE parsed as JSON "
                       "when it can be), e.g. score_threshold=0.2")
        s = p.add_argument_group("subset and output")
        s.add_argument("--samples", metavar="ID,ID", help="only these sample ids")
        s.add_argument("--group", action="append", metavar="GROUP", help="only this group (repeatable)")
        s.add_argument("--cache-dir", help="prediction cache folder (default: the user cache dir)")
        s.add_argument("--no-cache", action="store_true", help="neither read nor fill the cache")
        s.add_argument("--report", action="store_true", help="also write DIR/report")
        s.add_argument("--quiet", action="store_true", help="no progress bar")
        s.add_argument("--out", required=True, metavar="DIR")
        add_flag(p)
        add_scale_arguments(p)
        p.set_defaults(func=run)


def model_specs(args: argparse.Namespace) -> list:
    from masklens.core.inference.evaluate import ModelSpec

    models, weights, labels = args.model, args.weights or [], args.label or []
    if weights and len(weights) not in (1, len(models)):
        raise MasklensError(f"--weights given {len(weights)} times for {len(models)} --model",
                            hint="give one --weights per --model, in order (or one for all)")
    if labels and len(labels) != len(models):
        raise MasklensError(f"--label given {len(labels)} times for {len(models)} --model")
    from masklens.core.cli.predict import parse_options

    opts = parse_options(args.option)
    if args.device:
        opts["device"] = args.device
    return [
        ModelSpec(m, (weights[i] if len(weights) > 1 else weights[0]) if weights else None,
                  dict(opts), labels[i] if labels else None)
        for i, m in enumerate(models)
    ]


class _Bars:
    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.bars: dict[str, tqdm] = {}

    def __call__(self, label: str, done: int, total: int) -> None:
        from tqdm import tqdm

        bar = self.bars.get(label)
        if bar is None:
            bar = self.bars[label] = tqdm(total=total, desc=label, file=sys.stderr, dynamic_ncols=True,
                                          disable=True if self.quiet else None)
        bar.update(done - bar.n)

    def close(self) -> None:
        for b in self.bars.values():
            b.close()


def run(args: argparse.Namespace) -> int:
    from masklens.core.api import load_benchmark
    from masklens.core.cache.predictions import PredictionCache
    from masklens.core.cli.predict import check_device
    from masklens.core.cli.scale import apply_shard, runner_of
    from masklens.core.inference.evaluate import evaluate, subset
    from masklens.core.models.registry import require_extra
    from masklens.core.scoring.kind_args import kind_files

    kind = get_kind(args.kind)
    specs = model_specs(args)
    for spec in specs:  # unknown model names, missing extras and absent devices fail before any work
        require_extra(spec.name)
    check_device(args.device)
    runner = runner_of(args)
    params = kind.resolve_params({p.name: getattr(args, p.name, None) for p in kind.params})
    ids = [x.strip() for x in (args.samples or "").split(",") if x.strip()]
    if args.samples is not None and not ids:  # `--samples ''` is not "every sample"
        raise MasklensError(f"--samples names no sample id: {args.samples!r}",
                            hint="give comma-separated ids, or leave --samples out for all")
    if any(g is not None and not g.strip() for g in args.group or []):
        raise MasklensError("--group names no group: ''", hint="leave --group out for all groups")
    benchmark = subset(load_benchmark(kind, **kind_files(kind, args)), samples=ids, groups=args.group)
    benchmark = apply_shard(benchmark, args)
    cache = None if args.no_cache else PredictionCache(args.cache_dir)
    bars = _Bars(args.quiet)
    t0 = time.perf_counter()
    try:
        result = evaluate(kind, benchmark, specs, args.out, params=params, cache=cache,
                          images_dir=args.images, progress=bars, runner=runner)
    finally:
        bars.close()
        if cache is not None:
            cache.close()
    for label, st in result.stats.items():
        print(f"{label}: {st['prompts']} prompts ({st['cached']} from the cache, {st['computed']} "
              f"computed)", file=sys.stderr)
    if args.report:
        from masklens.core.files.output_dirs import add_to_marker
        from masklens.core.reports import ReportOptions, build_report

        build_report(kind, benchmark, result.runs, Path(args.out) / "report", params=params,
                     options=ReportOptions(images_dir=args.images,
                                           command="masklens " + shlex.join(sys.argv[1:])))
        add_to_marker(Path(args.out), [Path(args.out) / "report"])
    print(f"wrote {args.out} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0
