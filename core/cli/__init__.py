"""`masklens` command line: one module per sub-command, imported lazily."""

from __future__ import annotations

# the C half of `signal` (importing `signal` itself builds its enums: a millisecond or more in
# which Ctrl+C would still be Python's KeyboardInterrupt traceback); os was imported by
# Python's start-up (site), sys is built in
import _signal  # type: ignore[import-not-found]  # no stub: CPython's implementation module
import os
import sys

_INTERRUPTED = "masklens: interrupted; finished work is kept, re-run to continue"


def _early_interrupt(signum: int, frame: object) -> None:  # pragma: no cover - timing
    """Ctrl+C before :func:`main` took over (while Python imports): the same line, exit 130."""
    sys.stderr.write(_INTERRUPTED + "\n")
    sys.stderr.flush()
    os._exit(130)


def _install_early_handler() -> None:
    """The first thing the ``masklens`` program does: Ctrl+C while it starts says "interrupted"
    (not a KeyboardInterrupt traceback). Only for the program itself (not a library user's or
    a test's process), only over Python's default handler, only from the main thread (where
    ``signal.signal`` works at all). Nothing is imported before it.

    The program is recognised by its script's name (pip's console script, the script the
    launcher runs), by ``python -m``, or as the desktop bundle's executable (a frozen
    interpreter named ``masklens``, or ``masklens-bin`` behind the bundle's launcher).

    The launcher (packaging/launcher.c: the ``masklens`` of ``make setup`` and of the bundle)
    blocks SIGINT before the interpreter starts; once the handler is in place SIGINT is
    unblocked, and a Ctrl+C from the interpreter's start-up, pending until now, is delivered
    to it. A SIGINT blocked by whoever started the program is unblocked too: the program
    itself always answers Ctrl+C."""
    global _program
    main_module = getattr(sys.modules.get("__main__"), "__spec__", None)
    program = os.path.basename(sys.argv[0] if sys.argv else "").removesuffix(".exe") == "masklens" \
        or getattr(main_module, "name", "") in ("masklens", "masklens.__main__", "masklens.core.__main__") \
        or (getattr(sys, "frozen", False)
            and os.path.basename(sys.executable).removesuffix(".exe") in ("masklens", "masklens-bin"))
    if not program or _signal.getsignal(_signal.SIGINT) is not _signal.default_int_handler:
        return
    try:
        _signal.signal(_signal.SIGINT, _early_interrupt)
    except ValueError:  # not the main thread: nothing to take over
        return
    _program = True
    if hasattr(_signal, "pthread_sigmask"):  # POSIX
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, {_signal.SIGINT})


#: this process is the ``masklens`` program (not a library user's or a test's process)
_program = False


_install_early_handler()

import argparse  # noqa: E402 - after the handler: these imports take time
import signal  # noqa: E402
from collections.abc import Callable, Iterator, Sequence  # noqa: E402
from types import ModuleType  # noqa: E402
from typing import TYPE_CHECKING  # noqa: E402

from masklens.core import __version__  # noqa: E402
from masklens.core.errors import Cancelled, MasklensError  # noqa: E402

if TYPE_CHECKING:
    from masklens.core.scoring.contract import BenchmarkKind

# One function per sub-command, each importing its module by a plain import statement (so
# a bundler that follows imports, PyInstaller's, finds every command), only when it is called.
def _score() -> ModuleType:
    from masklens.core.cli import score

    return score


def _predict() -> ModuleType:
    from masklens.core.cli import predict

    return predict


def _evaluate() -> ModuleType:
    from masklens.core.cli import evaluate

    return evaluate


def _merge() -> ModuleType:
    from masklens.core.cli import merge

    return merge


def _report() -> ModuleType:
    from masklens.core.cli import report

    return report


def _models() -> ModuleType:
    from masklens.core.cli import models

    return models


def _review() -> ModuleType:
    from masklens.core.cli import review

    return review


def _export() -> ModuleType:
    from masklens.core.cli import export

    return export


def _cache() -> ModuleType:
    from masklens.core.cli import cache

    return cache


def _config() -> ModuleType:
    from masklens.core.cli import config

    return config


def _completion() -> ModuleType:
    from masklens.core.cli import completion

    return completion


def _desktop() -> ModuleType:
    from masklens.core.cli import desktop

    return desktop


def _gui() -> ModuleType:
    from masklens.core.cli import gui

    return gui


#: sub-command -> the function importing its module, which defines ``register(subparsers)``;
#: each sets ``func`` on its parser
COMMANDS: dict[str, Callable[[], ModuleType]] = {
    "score": _score,
    "predict": _predict,
    "evaluate": _evaluate,
    "merge": _merge,
    "report": _report,
    "models": _models,
    "review": _review,
    "export": _export,
    "cache": _cache,
    "config": _config,
    "completion": _completion,
    "install-desktop": _desktop,
    "gui": _gui,
}

#: each command's one-line help, for the top-level listing built without importing the
#: command modules (tests/cli/test_cli_start.py checks the listing equals the full build)
COMMAND_HELP: dict[str, str] = {
    "score": "score predictions against a benchmark",
    "predict": "run a model over a benchmark and write its predictions",
    "evaluate": "run model(s) over a benchmark, then score them",
    "merge": "merge the outputs of `predict --shard I/N` into one",
    "report": "write an HTML/CSV/JSON report of one or more models",
    "models": "list model backends and whether their weights are present",
    "review": "reviewers' verdicts and ground-truth corrections: export, merge, compare, apply, assign",
    "export": "export ground truth, predictions, outcomes and verdicts (COCO, FiftyOne, CSV)",
    "cache": "show or clear the prediction cache",
    "config": "list the settings, their values and where each value came from",
    "completion": "print a shell completion script (bash, zsh, tcsh)",
    "install-desktop": "add masklens to the desktop's application menu (XDG_DATA_HOME)",
    "gui": "open the inspection window",
}

#: the kind named on the command line (``masklens CMD KIND …``): only its parser is built
_chosen_kind: str | None = None


def kind_parsers(parser: argparse.ArgumentParser, verb: str) -> Iterator[tuple[BenchmarkKind, argparse.ArgumentParser]]:
    """A required ``KIND`` sub-command of ``parser`` per registered benchmark kind, helped
    "<verb> <kind title>"; yields each kind with its sub-parser to fill. When the command
    line names a kind, only that kind is imported and filled (the others stay bare choices)."""
    from masklens.core.scoring.contract import available_kinds, get_kind, kind_names

    kinds = parser.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    if _chosen_kind is None:
        for kind in available_kinds():
            yield kind, kinds.add_parser(kind.name, help=f"{verb} {kind.title or kind.name}")
        return
    for name in kind_names():
        if name != _chosen_kind:
            kinds.add_parser(name, help=f"{verb} {name}")
            continue
        kind = get_kind(name)
        yield kind, kinds.add_parser(kind.name, help=f"{verb} {kind.title or kind.name}")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; given ``argv``, only what it needs: the named command (the
    others are bare entries of the listing) and, for ``CMD KIND …``, that kind's parser."""
    global _chosen_kind
    parser = argparse.ArgumentParser(
        prog="masklens",
        description="Inspect and score promptable / open-vocabulary segmentation models.",
    )
    parser.add_argument("--version", action="version", version=f"masklens {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    command = argv[0] if argv is not None and argv and argv[0] in COMMANDS else None
    _chosen_kind = _kind_word(argv[1]) if argv is not None and command is not None and len(argv) > 1 else None
    try:
        for name, load in COMMANDS.items():
            if argv is None or name == command or name not in COMMAND_HELP:
                load().register(sub)
            else:
                sub.add_parser(name, help=COMMAND_HELP[name])
    finally:
        _chosen_kind = None
    from masklens.core.cli.help_text import use_plain_help

    use_plain_help(parser)
    return parser


def _kind_word(word: str) -> str | None:
    """``word`` when it names a registered kind that imports (an option, anything else or a
    broken plug-in: None, and every kind is built as before, the broken one with its warning)."""
    if word.startswith("-"):
        return None
    from masklens.core.scoring.contract import get_kind, kind_names

    if word not in kind_names():
        return None
    try:
        get_kind(word)
    except Exception:  # noqa: BLE001 - reported by available_kinds() on the full build
        return None
    return word


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; user mistakes print one clear message and exit non-zero, never a traceback.
    Ctrl+C at any moment (building the parser, opening the log included) is "interrupted", 130."""
    global _sigint_seen
    _sigint_seen = False
    previous = signal.getsignal(signal.SIGINT)
    ours = previous in (_early_interrupt, signal.default_int_handler)
    try:
        if ours:  # from here: KeyboardInterrupt, remembered (see _interrupt)
            signal.signal(signal.SIGINT, _interrupt)
        return _main(argv)
    except KeyboardInterrupt:
        print(_INTERRUPTED, file=sys.stderr)
        return 130
    finally:
        if ours:  # the program only exits now: a late Ctrl+C must not turn its status into -SIGINT
            signal.signal(signal.SIGINT, signal.SIG_IGN if _program else signal.default_int_handler)


#: a SIGINT arrived during this command (a library may have turned it into another exception)
_sigint_seen = False


def _interrupt(signum: int, frame: object) -> None:
    """Python's own Ctrl+C (KeyboardInterrupt), remembered: a library that catches it and fails
    otherwise (matplotlib's layout: "Invalid bounding box") still ends as "interrupted"."""
    global _sigint_seen
    _sigint_seen = True
    raise KeyboardInterrupt


def _main(argv: Sequence[str] | None) -> int:
    from masklens.core.runtime import logs

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    for stream in (sys.stdout, sys.stderr):  # a lone surrogate read from the input must not stop output
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    from masklens.core.runtime import config

    try:
        config.file_values()  # a broken config file stops every command, in one line
        logs.configure()
    except MasklensError as exc:
        print(f"masklens: error: {exc}", file=sys.stderr)
        return 2
    logs.logger.info("masklens %s: %s", __version__, " ".join(sys.argv[1:] if argv is None else argv))
    from masklens.core.errors import command_line
    from masklens.core.files.paths import allow_outside_root

    try:
        with command_line(), allow_outside_root(getattr(args, "allow_outside_root", False)):
            return int(args.func(args) or 0)
    except MasklensError as exc:
        logs.logger.warning("%s", exc)
        print(f"masklens: error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:  # a library of an extra that is not installed
        from masklens.core.runtime.extras import from_import_error

        missing = from_import_error(exc, f"masklens {args.command}")
        if missing is None:
            raise
        print(f"masklens: error: {missing}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `masklens score … | head`: the reader went away
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        if exc.filename is None:
            raise
        # a path the system refuses (too long, a loop of links) checked by no reader beforehand
        print(f"masklens: error: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except MemoryError:  # the readers refuse what is over the limits; this is what is left
        print("masklens: error: out of memory (input larger than the memory available; see "
              "docs/reliability.md, Limits)", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, Cancelled):
        print(_INTERRUPTED, file=sys.stderr)
        return 130
    except Exception:  # a bug: keep the traceback in the log file too, say where it is
        if _sigint_seen:  # Ctrl+C, turned into another error by a library on its way up
            logs.logger.info("interrupted", exc_info=True)
            print(_INTERRUPTED, file=sys.stderr)
            return 130
        logs.logger.exception("internal error in `masklens %s`", args.command)
        print(f"masklens: internal error; the log file is {logs.log_path()}", file=sys.stderr)
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
