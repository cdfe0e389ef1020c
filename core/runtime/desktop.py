"""``masklens install-desktop``: the desktop entry and icon in the user's XDG folders, so masklens
shows in the application menu with its icon (``--uninstall`` removes them again).

Files go under ``$XDG_DATA_HOME`` (default ``~/.local/share``): ``applications/masklens.desktop``
(its ``Exec`` names this installation's ``masklens``), ``icons/hicolor/scalable/apps/masklens.svg``
and ``icons/hicolor/256x256/apps/masklens.png``.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from masklens.core.errors import MasklensError
from masklens.core.files.io import atomic_write_bytes, atomic_write_text


def data_home() -> Path:
    """``$XDG_DATA_HOME`` when set to an absolute path (the spec ignores a relative one), else
    ``~/.local/share``."""
    env = os.environ.get("XDG_DATA_HOME", "")
    return Path(env) if env and os.path.isabs(env) else Path.home() / ".local" / "share"


def targets(base: Path | None = None) -> dict[str, Path]:
    """Bundled file name -> where it is installed."""
    base = base or data_home()
    return {
        "masklens.desktop": base / "applications" / "masklens.desktop",
        "masklens.svg": base / "icons" / "hicolor" / "scalable" / "apps" / "masklens.svg",
        "masklens.png": base / "icons" / "hicolor" / "256x256" / "apps" / "masklens.png",
    }


#: characters that make an Exec argument need double quotes (Desktop Entry Specification,
#: "The Exec key": space, tab, newline, ", ', backslash, >, <, ~, |, &, ;, $, *, ?, #, (, ), `)
_RESERVED = frozenset(" \t\n\"'\\><~|&;$*?#()`")
#: inside double quotes, these are escaped with a backslash
_ESCAPED_IN_QUOTES = frozenset('"`$\\')


def exec_argument(arg: str) -> str:
    """One argument of an ``Exec`` command line, quoted as the spec says: ``%`` doubled (a
    literal percent, not a field code), double quotes around an argument with a reserved
    character, and ``"``, `` ` ``, ``$``, ``\\`` escaped inside them."""
    arg = arg.replace("%", "%%")
    if not any(c in _RESERVED for c in arg):
        return arg
    return '"' + "".join("\\" + c if c in _ESCAPED_IN_QUOTES else c for c in arg) + '"'


def exec_value(argv: list[str]) -> str:
    """The ``Exec`` value of ``argv``: its quoted arguments, then the string-level escapes every
    desktop-entry string value has (``\\`` for a backslash, ``\\n``, ``\\t``, ``\\r``)."""
    line = " ".join(exec_argument(a) for a in argv)
    for raw, escaped in (("\\", "\\\\"), ("\n", "\\n"), ("\t", "\\t"), ("\r", "\\r")):
        line = line.replace(raw, escaped)
    return line


def executable() -> list[str]:
    """The command that starts this masklens: the ``masklens`` script beside this Python (a
    venv's), else the one on PATH, else ``python -m masklens``."""
    beside = Path(sys.executable).with_name("masklens")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("masklens")
    return [found] if found else [sys.executable, "-m", "masklens"]


def desktop_entry() -> str:
    """The bundled entry with ``Exec`` pointing at this installation."""
    from masklens.resources import DESKTOP_DIR

    lines = (DESKTOP_DIR / "masklens.desktop").read_text(encoding="utf-8").splitlines()
    exec_line = f"Exec={exec_value([*executable(), 'gui'])}"
    return "\n".join(exec_line if ln.startswith("Exec=") else ln for ln in lines) + "\n"


def check_gui_installed() -> None:
    """Refuse (one line naming the ``[gui]`` extra) when this installation cannot open the
    window: the menu entry would start ``masklens gui`` and fail with no terminal to say why."""
    from masklens.core.runtime.extras import MissingExtraError, missing_for

    absent = missing_for("gui")
    if absent is not None:
        raise MissingExtraError("the menu entry (it starts `masklens gui`)", absent, "gui")


def install(base: Path | None = None) -> list[Path]:
    """Write the entry and icons (atomically, replacing earlier ones); returns the paths.
    Refused when the ``[gui]`` extra is missing (:func:`check_gui_installed`)."""
    from masklens.resources import DESKTOP_DIR

    check_gui_installed()
    out = targets(base)
    atomic_write_text(out["masklens.desktop"], desktop_entry())
    for name in ("masklens.svg", "masklens.png"):
        atomic_write_bytes(out[name], (DESKTOP_DIR / name).read_bytes())
    return list(out.values())


def uninstall(base: Path | None = None) -> list[Path]:
    """Remove what :func:`install` wrote; returns the paths that were there."""
    removed = []
    for path in targets(base).values():
        try:
            path.unlink()
            removed.append(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise MasklensError(f"cannot remove it ({exc.strerror})", path=path) from None
    return removed
