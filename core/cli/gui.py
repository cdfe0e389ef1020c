"""`masklens gui`: open the inspection window (Qt is imported only here, lazily).

The one place the core reaches the window: :func:`run` imports ``masklens.gui.app`` when the
command runs. The import contracts (pyproject.toml) allow exactly this import and no other."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gui", help="open the inspection window")
    p.add_argument("workspace", nargs="?", metavar="FILE.masklens",
                   help="open this workspace (File › Save workspace… writes one)")
    p.add_argument("--demo", action="store_true", help="open the bundled demo benchmark")
    p.add_argument("--kind", help="benchmark kind to open (see `masklens score -h`)")
    p.add_argument("--screenshot", metavar="FILE.png",
                   help="render the window offscreen (on the demo of --kind) to FILE.png and exit")
    p.add_argument("--size", default="1600x1000", metavar="WxH",
                   help="window size for --screenshot (at least 1400x900; default 1600x1000)")
    p.add_argument("--sample", metavar="ID", help="show this sample (its id, or #N for the N-th)")
    p.add_argument("--filter", metavar="PRESET", help="select a browser filter preset by its label")
    p.add_argument("--error-view", action="store_true", help="start in the TP/FP/FN error view")
    p.add_argument("--prompt", action="append", default=[], metavar="ROLE[:LEVEL]=TEXT",
                   help="run a typed prompt on the shown sample (repeatable), e.g. negative=zebra")
    p.add_argument("--model", default=None, help="model for --prompt (default: the last one used, or demo)")
    p.add_argument("--compare", action="store_true", help="show the typed prompts side by side")
    from masklens.core.files.paths import add_flag

    add_flag(p)  # for benchmarks opened in this session
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from masklens.core.runtime.extras import check, extra_modules

    if args.kind is not None:  # refused before any window opens
        from masklens.core.scoring.contract import get_kind

        get_kind(args.kind)  # an unknown kind: MasklensError listing the kinds

    if args.workspace is not None:  # a file that is no workspace: one line, before any window
        from masklens.core.files.workspace import read_workspace

        read_workspace(args.workspace)
    check("masklens gui", extra_modules()["gui"], extra="gui")
    from masklens.gui.app import run_app

    return run_app(args)
