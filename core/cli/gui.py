"""`masklens gui`: open the inspection window (Qt is imported only here, lazily)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gui", help="open the inspection window")
    p.add_argument("--demo", action="store_true", help="open the bundled demo benchmark")
    p.add_argument("--kind", help="benchmark kind to open (see `masklens score -h`)")
    p.add_argument("--screenshot", metavar="FILE.png", help="render offscreen to FILE.png and exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from masklens.gui.app import run_app

    return run_app(args)
