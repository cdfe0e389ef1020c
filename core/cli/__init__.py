"""`masklens` command line: one module per sub-command, imported lazily."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from masklens.core import __version__
from masklens.core.errors import Cancelled, MasklensError

if TYPE_CHECKING:
    from masklens.core.scoring import BenchmarkKind

#: sub-command -> module defining ``register(subparsers)``; each sets ``func`` on its parser
COMMANDS: dict[str, str] = {
    "score": "masklens.core.cli.score",
    "predict": "masklens.core.cli.predict",
    "evaluate": "masklens.core.cli.evaluate",
    "merge": "masklens.core.cli.merge",
    "report": "masklens.core.cli.report",
    "models": "masklens.core.cli.models",
    "review": "masklens.core.cli.review",
    "export": "masklens.core.cli.export",
    "cache": "masklens.core.cli.cache",
    "completion": "masklens.core.cli.completion",
    "install-desktop": "masklens.core.cli.desktop",
    "gui": "masklens.core.cli.gui",
}


def kind_parsers(parser: argparse.ArgumentParser, verb: str) -> Iterator[tuple[BenchmarkKind, argparse.ArgumentParser]]:
    """A required ``KIND`` sub-command of ``parser`` per registered benchmark kind, helped
    "<verb> <kind title>"; yields each kind with its sub-parser to fill."""
    from masklens.core.scoring import available_kinds

    kinds = parser.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    for kind in available_kinds():
        yield kind, kinds.add_parser(kind.name, help=f"{verb} {kind.title or kind.name}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="masklens",
        description="Inspect and score promptable / open-vocabulary segmentation models.",
    )
    parser.add_argument("--version", action="version", version=f"masklens {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in COMMANDS.values():
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; user mistakes print one clear message and exit non-zero, never a traceback."""
    from masklens.core import logs

    parser = build_parser()
    args = parser.parse_args(argv)
    logs.configure()
    logs.logger.info("masklens %s: %s", __version__, " ".join(sys.argv[1:] if argv is None else argv))
    from masklens.core.paths import allow_outside_root

    try:
        with allow_outside_root(getattr(args, "allow_outside_root", False)):
            return int(args.func(args) or 0)
    except MasklensError as exc:
        logs.logger.warning("%s", exc)
        print(f"masklens: error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:  # a library of an extra that is not installed
        from masklens.core.extras import from_import_error

        missing = from_import_error(exc, f"masklens {args.command}")
        if missing is None:
            raise
        print(f"masklens: error: {missing}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `masklens score … | head`: the reader went away
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (KeyboardInterrupt, Cancelled):
        print("masklens: interrupted; finished work is kept, re-run to continue", file=sys.stderr)
        return 130
    except Exception:  # a bug: keep the traceback in the log file too, say where it is
        logs.logger.exception("internal error in `masklens %s`", args.command)
        print(f"masklens: internal error; the log file is {logs.log_path()}", file=sys.stderr)
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
