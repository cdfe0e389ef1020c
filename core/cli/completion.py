"""`masklens completion bash|zsh|tcsh`: the shell completion script (made by shtab from the
parser, so every sub-command, kind and flag is completed), e.g.
``masklens completion bash > ~/.local/share/bash-completion/completions/masklens``."""

from __future__ import annotations

import argparse

SHELLS = ("bash", "zsh", "tcsh")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("completion", help="print a shell completion script (bash, zsh, tcsh)")
    parser.add_argument("shell", choices=SHELLS)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import shtab

    from masklens.core.cli import build_parser

    print(shtab.complete(build_parser(), shell=args.shell), end="")
    return 0
