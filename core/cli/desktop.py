"""`masklens install-desktop [--uninstall]`: the application-menu entry and icon (XDG folders)."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("install-desktop",
                            help="add masklens to the desktop's application menu (XDG_DATA_HOME)")
    parser.add_argument("--uninstall", action="store_true", help="remove the entry and icon again")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from masklens.core.runtime import desktop

    if args.uninstall:
        removed = desktop.uninstall()
        print("removed " + (", ".join(map(str, removed)) if removed else "nothing (not installed)"),
              file=sys.stderr)
        return 0
    for path in desktop.install():
        print(f"installed {path}", file=sys.stderr)
    return 0
