"""The flags that take `predict`/`evaluate` past one process: ``--shard I/N`` and ``--ray [ADDRESS]``."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from typing import Any


def add_scale_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("scale out (docs/scale.md)")
    g.add_argument("--shard", metavar="I/N", default=None,
                   help="only shard I of N (0-based; images partitioned, balanced by prompt count); "
                   "`masklens merge` joins the shards' outputs")
    g.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="run the model on Ray actors: a local instance, or 'auto' / 'ray://HOST:PORT' "
                   "for a cluster (needs pip install 'masklens[ray]')")
    g.add_argument("--ray-workers", type=int, default=None, metavar="N",
                   help="segmenter actors (default: one per GPU, else one per CPU)")
    g.add_argument("--ray-batch", type=int, default=4, metavar="N",
                   help="images per actor call (default 4)")


def shard_of(args: argparse.Namespace) -> Any:
    from masklens.core.inference.shards import parse_shard

    return parse_shard(args.shard) if args.shard is not None else None


def apply_shard(benchmark: Any, args: argparse.Namespace) -> Any:
    """The benchmark, or its shard when ``--shard`` is given."""
    shard = shard_of(args)
    if shard is None:
        return benchmark
    from masklens.core.inference.shards import shard_benchmark

    return shard_benchmark(benchmark, shard, getattr(args, "images", None))


def runner_of(args: argparse.Namespace) -> Callable[..., Any] | None:
    """The Ray runner bound to the flags (None: the single-process runner); fails at once,
    in one line, when Ray is not installed."""
    if args.ray is None:
        return None
    from masklens.core.errors import MasklensError
    from masklens.core.inference.ray_runner import RayConfig, import_ray, run_benchmark_ray

    import_ray()
    for flag in ("ray_workers", "ray_batch"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise MasklensError(f"--{flag.replace('_', '-')} must be at least 1, got {value}")
    config = RayConfig(address=args.ray or None, workers=args.ray_workers, batch_size=args.ray_batch)
    return functools.partial(run_benchmark_ray, config=config)


def write_shard_record(kind: Any, benchmark: Any, predictions: Any, out: Any) -> None:
    """The sidecar `masklens merge` reads, when the benchmark is a shard (an unsharded output
    removes a stale one, so that merge never trusts it)."""
    from masklens.core.files.io import is_special_file
    from masklens.core.inference.shards import sidecar_path, write_sidecar

    if is_special_file(out):  # --out /dev/null: no record beside a device
        return
    if "shard" in benchmark.meta:
        write_sidecar(out, kind.name, benchmark, predictions)
    else:
        sidecar_path(out).unlink(missing_ok=True)
