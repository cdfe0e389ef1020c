"""`masklens merge KIND <benchmark args> --pred A --pred B … --out OUT`: join the outputs of
`masklens predict … --shard I/N` into one prediction output in the benchmark's own format.

The shards' records (``A.shard.json`` beside each output) name their samples: a sample in two
shards (overlap) or in none (gap) is an error naming the files and samples. The result equals
the output of one unsharded `predict` record for record, and is written atomically.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from masklens.core.cli import kind_parsers
from masklens.core.scoring.contract import get_kind


def register(sub: argparse._SubParsersAction) -> None:
    from masklens.core.scoring.kind_args import prediction_actions

    parser = sub.add_parser("merge", help="merge the outputs of `predict --shard I/N` into one",
                            description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    for kind, p in kind_parsers(parser, "merge shards of"):
        kind.add_arguments(p)
        own: list[str] = []
        for action in prediction_actions(p):  # the kind's prediction flag becomes repeatable
            own += action.option_strings
            _drop(p, action)
        p.add_argument(*dict.fromkeys(["--pred", *own]), dest="merge_preds", action="append",
                       required=True, metavar="SHARD_OUTPUT",
                       help="a shard's output (file or folder, as `predict --shard` wrote it); repeat")
        p.add_argument("--out", required=True, help="merged output (file or folder, as `predict --out`)")
        p.set_defaults(func=run)


def _drop(parser: argparse.ArgumentParser, action: argparse.Action) -> None:
    parser._remove_action(action)
    for group in parser._action_groups:
        if action in group._group_actions:
            group._group_actions.remove(action)
    for flag in action.option_strings:
        parser._option_string_actions.pop(flag, None)


def run(args: argparse.Namespace) -> int:
    from masklens.core import api
    from masklens.core.inference.prediction_io import check_output, write_atomically
    from masklens.core.inference.shards import merge_shards
    from masklens.core.scoring.kind_args import kind_files

    kind = get_kind(args.kind)
    files = {k: v for k, v in kind_files(kind, args).items() if not k.startswith("pred")}
    inputs = [*files.values(), args.merge_preds]
    check_output(Path(args.out), inputs)  # before reading the shards
    benchmark = api.load_benchmark(kind, **files)
    merged = merge_shards(kind, benchmark, args.merge_preds)
    written = write_atomically(kind, benchmark, merged, Path(args.out), inputs)
    where = ", ".join(map(str, written)) if len(written) <= 3 else f"{args.out} ({len(written)} files)"
    print(f"wrote {where}: {len(args.merge_preds)} shards, {len(benchmark.samples)} samples, "
          f"{len(merged.by_prompt)} predictions, {len(merged.missing)} missing", file=sys.stderr)
    return 0
