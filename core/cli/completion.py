"""`masklens completion bash|zsh|tcsh [--install]`: the shell completion script (made by shtab
from the parser, so every sub-command, kind and flag is completed; path arguments complete file
or folder names), printed, or with ``--install`` written where the shell looks for it (its
folders created: on a fresh home ``~/.local/share/bash-completion/completions/`` does not exist,
and ``masklens completion bash > that/folder/masklens`` fails in the shell before masklens runs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from masklens.core.errors import MasklensError

SHELLS = ("bash", "zsh", "tcsh")
#: destinations that name folders / files (the kinds' and the commands' path arguments)
FOLDERS = frozenset({"images", "root", "pred_dir", "cache_dir"})
FILES = frozenset({"ann", "pred", "gt", "data", "out", "reviews", "weights", "screenshot"})


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("completion", help="print a shell completion script (bash, zsh, tcsh)")
    parser.add_argument("shell", choices=SHELLS)
    parser.add_argument("--install", action="store_true",
                        help="write it where the shell looks for it (bash: $XDG_DATA_HOME/bash-completion/"
                             "completions/masklens), creating the folders, and say where")
    parser.set_defaults(func=run)


def install_path(shell: str) -> Path:
    """Where ``--install`` writes the script: bash-completion's per-user folder for bash, a folder
    of zsh functions (to add to ``fpath``) for zsh, a file to ``source`` for tcsh."""
    from masklens.core.runtime.desktop import data_home

    return {"bash": data_home() / "bash-completion" / "completions" / "masklens",
            "zsh": data_home() / "zsh" / "site-functions" / "_masklens",
            "tcsh": data_home() / "masklens" / "completion.tcsh"}[shell]


#: what to do after --install, per shell
_AFTER_INSTALL = {
    "bash": "new bash shells complete masklens (bash-completion loads it on first use)",
    "zsh": "add `fpath=({folder} $fpath)` before `compinit` in ~/.zshrc",
    "tcsh": "add `source {path}` to ~/.tcshrc",
}


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
    script = guard_bash(script) if args.shell == "bash" else script
    if not args.install:
        print(script, end="")
        return 0
    from masklens.core.files.io import atomic_write_text

    path = install_path(args.shell)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, script)
    except OSError as exc:
        raise MasklensError(f"cannot write the completion script ({exc.strerror or exc})", path=path) from None
    print(f"wrote {path}; " + _AFTER_INSTALL[args.shell].format(folder=path.parent, path=path), file=sys.stderr)
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
