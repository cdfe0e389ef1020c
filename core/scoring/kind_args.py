"""A benchmark kind's file arguments, as its ``add_arguments`` declares them.

The CLI, the GUI's open dialog and the Python API name a kind's files the same way: by the
destinations of its command-line flags (``--ann`` -> ``ann``, ``--pred-dir`` -> ``pred_dir``).
This module turns a parsed Namespace or a mapping into those keywords and checks them, so that a
kind's loaders only ever receive keyword arguments.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from masklens.core.errors import MasklensError
from masklens.core.scoring.contract import BenchmarkKind


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # never exit the process from a library
        raise MasklensError(f"{self.prog}: {message}")


def kind_parser(kind: BenchmarkKind, prog: str | None = None) -> argparse.ArgumentParser:
    """A parser with the kind's own arguments (as `masklens score KIND` has them)."""
    parser = _Parser(prog=prog or f"masklens score {kind.name}", add_help=False)
    kind.add_arguments(parser)
    return parser


def prediction_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The actions naming prediction inputs: destinations ``pred…`` (``--pred``, ``--pred-dir``)."""
    return [a for a in parser._actions if a.dest.startswith("pred") and a.option_strings]


def file_actions(kind: BenchmarkKind) -> list[argparse.Action]:
    """Every argument of the kind (ground truth, predictions, images), in declaration order."""
    return [a for a in kind_parser(kind)._actions if a.dest != argparse.SUPPRESS]


def kind_files(kind: BenchmarkKind, values: argparse.Namespace | Mapping[str, Any]) -> dict[str, Any]:
    """The kind's file arguments found in ``values`` (a parsed Namespace or a mapping), as the
    keywords its loaders take; unset (None) values are left out."""
    given = vars(values) if isinstance(values, argparse.Namespace) else dict(values)
    out = {}
    for action in file_actions(kind):
        value = given.get(action.dest)
        if value is None:
            continue
        if isinstance(action, argparse._AppendAction) and not isinstance(value, (list, tuple)):
            value = [value]  # one file where the flag may be repeated (pcs: gt="a.json")
        out[action.dest] = value
    return out


def _flag(action: argparse.Action) -> str:
    return f"{action.dest}= ({'/'.join(action.option_strings)})"


def check_keywords(kind: BenchmarkKind, names: Iterable[str], *, extra: Iterable[str] = (),
                   params: Sequence[str] = ()) -> None:
    """MasklensError for a keyword that is neither one of the kind's arguments, nor in ``extra``,
    nor one of ``params`` (the scoring parameters the caller takes): it names the keyword, the
    closest known one ("did you mean …") and every file argument and parameter."""
    actions = file_actions(kind)
    known = [a.dest for a in actions]
    unknown = sorted(set(names) - set(known) - set(extra) - set(params))
    if not unknown:
        return
    import difflib

    close = difflib.get_close_matches(unknown[0], [*known, *params], n=1, cutoff=0.6)
    listing = f"its files: {', '.join(_flag(a) for a in actions)}"
    if params:
        listing += f"; its parameters: {', '.join(f'{p}=' for p in params)}"
    raise MasklensError(
        f"{kind.title or kind.name} takes no argument {', '.join(f'{u}=' for u in unknown)}",
        hint=(f"did you mean {close[0]}=? " if close else "") + listing,
    )


def check_files(kind: BenchmarkKind, files: Mapping[str, Any], *, predictions: bool,
                extra: tuple[str, ...] = ()) -> None:
    """MasklensError for a keyword that is not one of the kind's arguments (nor in ``extra``), or a
    required one that is missing: ground-truth arguments, or prediction arguments when
    ``predictions`` is true."""
    check_keywords(kind, files, extra=extra)
    actions = file_actions(kind)
    title = kind.title or kind.name
    preds = {a.dest for a in prediction_actions(kind_parser(kind))}
    for action in actions:
        if not action.required or files.get(action.dest) is not None:
            continue
        if (action.dest in preds) == predictions:
            raise MasklensError(f"{title} needs {_flag(action)}")
