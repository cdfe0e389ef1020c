"""`masklens` command line: one module per sub-command, imported lazily."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from masklens.core import __version__
from masklens.core.errors import Cancelled, MasklensError

#: sub-command -> module defining ``register(subparsers)``; each sets ``func`` on its parser
COMMANDS: dict[str, str] = {
    "score": "masklens.core.cli.score",
    "predict": "masklens.core.cli.predict",
    "evaluate": "masklens.core.cli.evaluate",
    "report": "masklens.core.cli.report",
    "models": "masklens.core.cli.models",
    "review": "masklens.core.cli.review",
    "gui": "masklens.core.cli.gui",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="masklens",
        description="Inspect and score promptable / open-vocabulary segmentation models.",
    )
    parser.add_argument("--version", action="version", version=f"masklens {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in COMMANDS.values():
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name == module:  # command not built yet
                continue
            raise
        mod.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; user mistakes print one clear message and exit non-zero, never a traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except MasklensError as exc:
        print(f"masklens: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `masklens score … | head`: the reader went away
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (KeyboardInterrupt, Cancelled):
        print("masklens: interrupted; finished work is kept, re-run to continue", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
