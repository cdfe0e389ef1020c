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
        elif "--model" in action.option_strings:
            from masklens.core.models.registry import backend_names

            action.choices = backend_names()  # for the script only: --model completes names
        elif action.option_strings and (action.metavar == "DIR" or action.dest in FOLDERS):
            # shtab's API: it reads a `complete` attribute it asks callers to set on argparse actions
            action.complete = shtab_module.DIRECTORY  # type: ignore[attr-defined]
        elif action.option_strings and (action.metavar == "FILE" or action.dest in FILES):
            action.complete = shtab_module.FILE  # type: ignore[attr-defined]  # as above


def run(args: argparse.Namespace) -> int:
    import shtab

    from masklens.core.cli import build_parser

    parser = build_parser()
    mark_paths(parser, shtab)
    script = shtab.complete(parser, shell=args.shell)
    print(guard_bash(script) if args.shell == "bash" else script, end="")
    return 0


#: the first line of shtab's bash completion function for the masklens parser
_BASH_FUNCTION = "_shtab_masklens() {\n"
#: shtab's loop over the words before the cursor (never ends when COMP_CWORD is 0 or unset)
_BASH_LOOP = "while [ $word_index -ne $COMP_CWORD ]; do"


def guard_bash(script: str) -> str:
    """shtab's bash function walks the words up to ``COMP_CWORD`` with ``-ne``, starting at 1:
    called outside a completion (``compgen -F _shtab_masklens``, where ``COMP_CWORD`` is unset
    or 0) it loops forever. Return at once without a word to complete, and stop the walk at
    ``COMP_CWORD`` whatever it is."""
    guard = '  [[ "${COMP_CWORD:-0}" =~ ^[0-9]+$ && ${COMP_CWORD:-0} -ge 1 ]] || return 0\n'
    script = script.replace(_BASH_FUNCTION, _BASH_FUNCTION + guard, 1)
    return script.replace(_BASH_LOOP, "while [ $word_index -lt $COMP_CWORD ]; do")
