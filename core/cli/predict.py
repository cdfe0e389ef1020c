"""`masklens predict KIND --model NAME … --out OUT`: run a model over a benchmark's prompts.

The benchmark arguments are those of `masklens score KIND`; its prediction
arguments (``--pred``/``--pred-dir``) become optional and are only read by
``--model replay``. The output is written with the kind's ``write_predictions``,
so `masklens score KIND … --pred OUT` reads it directly. Finished images are in
the prediction cache as soon as they are done, so Ctrl-C loses nothing and a
re-run continues; the output itself is written atomically at the end.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from pathlib import Path
from typing import Any

from masklens.core.cli import kind_parsers
from masklens.core.cli.scale import add_scale_arguments, apply_shard, runner_of, write_shard_record
from masklens.core.errors import MasklensError, ModelError
from masklens.core.files.paths import add_flag
from masklens.core.inference.prediction_io import (
    check_output,
    default_output_threshold,
    write_atomically,
)
from masklens.core.scoring.contract import BenchmarkKind, get_kind

_REPLAY_ONLY = "(predict: read only with --model replay, as the file to replay)"


def _has_flag(parser: argparse.ArgumentParser, flag: str) -> bool:
    return flag in parser._option_string_actions


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The model flags shared by `predict` (and reusable by other commands)."""
    g = parser.add_argument_group("model")
    g.add_argument("--model", required=True, metavar="NAME", help="backend name (see `masklens models`)")
    g.add_argument("--weights", metavar="PATH_OR_ID",
                   help="checkpoint folder/file or Hugging Face id (default: the backend's own); "
                   "for --model replay: the prediction file")
    g.add_argument("--device", default=None, metavar="auto|cpu|cuda[:N]|mps",
                   help="where to run (default: auto = cuda, then mps, then cpu)")
    if not _has_flag(parser, "--score-threshold"):
        g.add_argument("--score-threshold", dest="model_score_threshold", type=float, default=None,
                       metavar="T", help="keep instances scored >= T (default: 0.05, or the backend's own "
                       "threshold where lower; the scorer applies its t; HalluSegBench's masks: "
                       "the backend's calibrated value)")
    g.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="backend-specific option (repeatable; VALUE is parsed as JSON when it can be)")
    c = parser.add_argument_group("cache and output")
    c.add_argument("--cache-dir", default=None,
                   help="prediction cache folder (default: $MASKLENS_CACHE_DIR or the user cache dir)")
    c.add_argument("--no-cache", action="store_true", help="neither read nor fill the prediction cache")
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    c.add_argument("--out", required=True, help="output file (or folder, for HalluSegBench)")


def add_kind_arguments(parser: argparse.ArgumentParser, kind: BenchmarkKind) -> list[str]:
    """The kind's own arguments with its prediction inputs made optional; returns their dests."""
    from masklens.core.models.replay import prediction_actions

    kind.add_arguments(parser)
    dests = []
    for action in prediction_actions(parser):
        action.required = False
        action.help = f"{action.help or ''} {_REPLAY_ONLY}".strip()
        dests.append(action.dest)
    if not _has_flag(parser, "--images"):
        parser.add_argument("--images", default=None, metavar="DIR",
                            help="folder of the benchmark's image files (when the annotation's paths "
                            "do not point at them)")
    return dests


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "predict",
        help="run a model over a benchmark and write its predictions",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    for kind, p in kind_parsers(parser, "predict"):
        dests = add_kind_arguments(p, kind)
        add_model_arguments(p)
        add_flag(p)
        add_scale_arguments(p)
        p.set_defaults(func=run, prediction_dests=dests)


def parse_options(items: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; VALUE as JSON when it parses (numbers, booleans), else text."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise MasklensError(f"--option expects KEY=VALUE, got '{item}'")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


def model_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options `predict` passes to the backend's ``create``."""
    from masklens.core.models.registry import _resolve, backend_info

    info = backend_info(args.model)  # unknown model -> ModelError
    opts: dict[str, Any] = parse_options(getattr(args, "option", []) or [])
    given = {
        "weights": args.weights,
        "device": args.device,
        "score_threshold": getattr(args, "model_score_threshold", None),
    }
    if given["score_threshold"] is None and "score_threshold" not in opts:
        given["score_threshold"] = default_output_threshold(get_kind(args.kind), args.model)
    opts.update({k: v for k, v in given.items() if v is not None})
    params = inspect.signature(_resolve(args.model)[1]).parameters
    if args.weights is not None and not info.needs_weights and "weights" not in params:
        raise ModelError(f"model '{args.model}' takes no weights", hint="drop --weights")
    pred_given = [d for d in getattr(args, "prediction_dests", []) if getattr(args, d, None) is not None]
    if "kind" in params and "args" in params:  # a backend that reads benchmark files (replay)
        from masklens.core.scoring.kind_args import kind_files

        opts.update(kind=args.kind, **kind_files(get_kind(args.kind), args))
    elif pred_given:
        flags = ", ".join("--" + d.replace("_", "-") for d in pred_given)
        raise MasklensError(
            f"{flags} is read only with --model replay; `predict` writes predictions to --out",
            hint="to score existing predictions use `masklens score`",
        )
    return opts


def check_device(device: str | None) -> None:
    """Fail before any work when the requested device is absent (e.g. --device cuda without CUDA)."""
    if device in (None, "auto", "cpu"):
        return
    from masklens.core.models.torch_device import resolve_device

    resolve_device(device)


class _Bar:
    """tqdm progress on stderr (hidden with --quiet or when stderr is not a terminal)."""

    def __init__(self, quiet: bool, desc: str) -> None:
        self.quiet, self.desc = quiet, desc
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=self.desc, unit="prompt", file=sys.stderr,
                            disable=True if self.quiet else None, dynamic_ncols=True)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run(args: argparse.Namespace) -> int:
    from masklens.core import api
    from masklens.core.inference.runner import RunStats
    from masklens.core.models.manager import ModelManager
    from masklens.core.models.registry import require_extra
    from masklens.core.scoring.kind_args import kind_files

    kind = get_kind(args.kind)
    options = model_options(args)
    require_extra(args.model)  # a missing pip extra fails before any work
    check_device(args.device)
    runner = runner_of(args)
    files = kind_files(kind, args)  # --pred…: read by --model replay only (it has them in options)
    inputs = [*files.values(), args.images]
    check_output(Path(args.out), inputs)  # before any model runs
    benchmark = apply_shard(api.load_benchmark(kind, **files), args)
    segmenter = ModelManager().get(args.model, **options)
    stats = RunStats()
    bar = _Bar(args.quiet, f"{args.model} on {kind.title or kind.name}")
    t0 = time.perf_counter()
    try:
        predictions = api.predict(
            kind, segmenter, benchmark,
            option={k: v for k, v in options.items() if k != "kind" and k not in files},
            images=args.images, cache_dir=args.cache_dir, no_cache=args.no_cache,
            progress=bar, stats=stats, runner=runner,
        )
    finally:
        bar.close()
    out = Path(args.out)
    written = write_atomically(kind, benchmark, predictions, out, inputs)
    write_shard_record(kind, benchmark, predictions, out)
    where = ", ".join(map(str, written)) if len(written) <= 3 else f"{out} ({len(written)} files)"
    print(
        f"wrote {where}: {stats.prompts} prompts on {stats.images} images "
        f"({stats.cached} from the cache, {stats.computed} computed, {len(predictions.missing)} missing) "
        f"in {time.perf_counter() - t0:.1f} s",
        file=sys.stderr,
    )
    return 0
