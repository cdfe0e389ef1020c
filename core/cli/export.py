"""`masklens export KIND <benchmark args> --pred P [--pred P2 …] --to coco|fiftyone|csv --out DIR`."""

from __future__ import annotations

import argparse
import sys

from masklens.core.cli import kind_parsers
from masklens.core.files.paths import add_flag

FORMATS = ("coco", "fiftyone", "csv")


def register(sub: argparse._SubParsersAction) -> None:
    from masklens.core.cli.report import add_repeatable_predictions
    from masklens.core.cli.score import add_param_flags

    parser = sub.add_parser(
        "export", help="export ground truth, predictions, outcomes and verdicts (COCO, FiftyOne, CSV)",
        description="Write a benchmark, its prediction sets, each instance's TP/FP/FN at (t, τ) and "
        "the reviewers' verdicts as COCO JSON, a FiftyOne dataset directory or per-sample CSV. "
        "File arguments may be hf://datasets/OWNER/NAME/path. See docs/interop.md.")
    for kind, p in kind_parsers(parser, "export"):
        dests = add_repeatable_predictions(p, kind)
        add_param_flags(p, kind)
        g = p.add_argument_group("export")
        names = {spec.name for spec in kind.params}
        if "score_threshold" not in names:
            g.add_argument("--score-threshold", type=float, default=None, metavar="t",
                           help="accept an instance when its score s ≥ t, for TP/FP/FN (default 0.5)")
        if "iou_threshold" not in names:
            g.add_argument("--iou-threshold", type=float, default=None, metavar="τ",
                           help="a matched instance is a TP when its IoU is ≥ τ (default 0.5)")
        g.add_argument("--to", required=True, choices=FORMATS, help="what to write")
        g.add_argument("--out", required=True, metavar="DIR",
                       help="output folder (new, empty, or one masklens wrote: replaced atomically)")
        g.add_argument("--label", action="append", help="name of each prediction set (in order)")
        g.add_argument("--reviews", action="append", metavar="DB",
                       help="review database(s) with the verdicts (default: the benchmark's own)")
        g.add_argument("--corrections", action="append", metavar="DB",
                       help="review database(s) whose ground-truth corrections are applied to the "
                       "exported ground truth (and the outcomes)")
        if "--images" not in p._option_string_actions:
            g.add_argument("--images", metavar="DIR", help="image folder (FiftyOne's data/)")
        g.add_argument("--copy-images", action="store_true",
                       help="copy the images into a FiftyOne directory (default: symbolic links)")
        add_flag(p)  # the same image/mask paths as score and report: the same policy
        p.set_defaults(func=run, prediction_dests=dests)


def run(args: argparse.Namespace) -> int:
    from masklens.core.interop.export import export
    from masklens.core.scoring.contract import get_kind
    from masklens.core.scoring.kind_args import kind_files

    kind = get_kind(args.kind)
    files = kind_files(kind, args)
    params = {n: getattr(args, n) for n in ("score_threshold", "iou_threshold", *(p.name for p in kind.params))
              if getattr(args, n, None) is not None}
    written = export(kind, args.to, args.out, label=args.label, reviews=args.reviews,
                     corrections=args.corrections,
                     copy_images=args.copy_images, **files, **params)
    print(f"wrote {args.out} ({', '.join(str(p.relative_to(args.out)) for p in written)})",
          file=sys.stderr)
    return 0
