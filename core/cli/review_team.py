"""`masklens review apply|assign|queue …`: corrected benchmarks out, and review as a team."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from masklens.core.errors import MasklensError

if TYPE_CHECKING:
    from masklens.core.scoring.contract import BenchmarkKind


def register(acts: argparse._SubParsersAction) -> None:
    """Add the actions to `masklens review`'s sub-parsers."""
    from masklens.core.cli import kind_parsers

    ap = acts.add_parser(
        "apply", help="write a benchmark with the ground-truth corrections applied, and a changelog",
        description="Write the benchmark in its own format with the review store's ground-truth "
        "corrections applied (the inputs are never written over), plus a JSON changelog beside "
        "it: who, when, why, which tool, mask areas before/after and their IoU. Two reviewers "
        "correcting one instance differently is an error: pass --reviewer to apply one's.")
    for kind, p in kind_parsers(ap, "apply corrections to"):
        _benchmark_arguments(p, kind)
        p.add_argument("--store", action="append", required=True, metavar="DB",
                       help="review database(s) with the corrections (repeatable)")
        p.add_argument("--out", required=True, metavar="NEW",
                       help="the corrected benchmark: a file (CAFE, HalluSegBench data.json) or a "
                       "folder (SA-Co/Gold: one file per annotator file)")
        p.add_argument("--reviewer", help="apply only this reviewer's corrections")
        p.set_defaults(func=_apply)
    asg = acts.add_parser(
        "assign", help="split a benchmark's samples into per-reviewer queues (with an overlap)",
        description="Shuffle the benchmark's samples (--seed), give a share --overlap of them to "
        "every reviewer (for agreement) and deal the rest round-robin; the queues are stored in "
        "the review database (the latest assignment of a benchmark is the one in force).")
    for kind, p in kind_parsers(asg, "assign"):
        _benchmark_arguments(p, kind)
        p.add_argument("--store", required=True, metavar="DB", help="review database (created when missing)")
        p.add_argument("--reviewers", required=True, help="comma-separated names, e.g. ana,ben,eve")
        p.add_argument("--overlap", type=float, default=0.0,
                       help="share of the samples every reviewer gets, in [0, 1] (default 0)")
        p.add_argument("--seed", type=int, default=0, help="shuffle seed (default 0)")
        p.set_defaults(func=_assign)
    q = acts.add_parser("queue", help="each reviewer's queue progress (or one reviewer's queue)")
    q.add_argument("db")
    q.add_argument("--benchmark", required=True, help="benchmark key (kind:name)")
    q.add_argument("--reviewer", help="list this reviewer's queue, one sample id a line")
    q.set_defaults(func=_queue)


def _benchmark_arguments(p: argparse.ArgumentParser, kind) -> None:
    """The kind's ground-truth arguments (its prediction arguments accepted, not needed)."""
    from masklens.core.scoring.kind_args import prediction_actions

    kind.add_arguments(p)
    for action in prediction_actions(p):
        action.required = False
        action.help = argparse.SUPPRESS


def _files(args: argparse.Namespace) -> tuple[BenchmarkKind[Any], dict[str, Any]]:
    from masklens.core.interop import hub
    from masklens.core.scoring.contract import get_kind
    from masklens.core.scoring.kind_args import kind_files, kind_parser, prediction_actions

    kind = get_kind(args.kind)
    preds = {a.dest for a in prediction_actions(kind_parser(kind))}
    files = {k: v for k, v in kind_files(kind, args).items() if k not in preds}
    return kind, hub.local_files(kind, files)


def _apply(args: argparse.Namespace) -> int:
    from masklens.core.review.apply import apply_corrections

    kind, files = _files(args)
    done = apply_corrections(kind, files, args.store, args.out, reviewer=args.reviewer)
    print(f"applied {done.corrections} correction(s) to {done.samples} sample(s); wrote "
          f"{', '.join(map(str, done.written))} and {done.changelog}", file=sys.stderr)
    return 0


def _assign(args: argparse.Namespace) -> int:
    from masklens.core.review.locations import benchmark_key
    from masklens.core.review.store import Role, open_store

    kind, files = _files(args)
    bench = kind.load_benchmark(**files)
    key = benchmark_key(bench)
    with open_store(args.store, Role.WRITE) as st:
        queues = st.assign(key, [s.id for s in bench.samples], args.reviewers.split(","),
                           overlap=args.overlap, seed=args.seed)
    shared = sum(q.shared for q in next(iter(queues.values())))
    print(f"assigned {len(bench.samples)} samples of {key} to {len(queues)} reviewer(s), "
          f"{shared} shared by all: " + ", ".join(f"{r} {len(q)}" for r, q in queues.items()))
    return 0


def _queue(args: argparse.Namespace) -> int:
    from masklens.core.review.store import Role, open_store
    from masklens.core.scoring.tables import format_table

    with open_store(args.db, Role.READ) as st:
        if args.reviewer:
            items = st.queue(args.benchmark, args.reviewer)
            if not items:
                raise MasklensError(f"{args.reviewer} has no queue for {args.benchmark}",
                                    path=args.db, hint="run `masklens review assign` first")
            print("\n".join(items))
            return 0
        names = st.assigned_reviewers(args.benchmark)
        if not names:
            raise MasklensError(f"no assignment for {args.benchmark}", path=args.db,
                                hint="run `masklens review assign` first")
        rows = [[r, *st.progress(args.benchmark, r)] for r in names]
    print(format_table(["reviewer", "done", "queued"], rows))
    return 0
