"""`masklens completion bash|zsh|tcsh`: the shell completion script (made by shtab from the
parser, so every sub-command, kind and flag is completed; path arguments complete file or folder
names), e.g. ``masklens completion bash > ~/.local/share/bash-completion/completions/masklens``."""

from __future__ import annotations

import argparse

SHELLS = ("bash", "zsh", "tcsh")
#: destinations that name folders / files (the kinds' and the commands' path arguments)
FOLDERS = frozenset({"images", "root", "pred_dir", "cache_dir"})
FILES = frozenset({"ann", "pred", "gt", "data", "out", "reviews", "weights", "screenshot"})


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("completion", help="print a shell completion script (bash, zsh, tcsh)")
    parser.add_argument("shell", choices=SHELLS)
    parser.set_defaults(func=run)


def mark_paths(parser: argparse.ArgumentParser, shtab_module) -> None:  # noqa: ANN001 - shtab
    """Tell shtab which options take a folder or a file, in ``parser`` and all its sub-parsers."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                mark_paths(child, shtab_module)
        elif action.option_strings and (action.metavar == "DIR" or action.dest in FOLDERS):
            action.complete = shtab_module.DIRECTORY
        elif action.option_strings and (action.metavar == "FILE" or action.dest in FILES):
            action.complete = shtab_module.FILE


def run(args: argparse.Namespace) -> int:
    import shtab

    from masklens.core.cli import build_parser

    parser = build_parser()
    mark_paths(parser, shtab)
    print(shtab.complete(parser, shell=args.shell), end="")
    return 0
