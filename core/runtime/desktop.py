"""``masklens install-desktop``: the desktop entry, icon and workspace file type in the user's
XDG folders, so masklens shows in the application menu with its icon and a masklens workspace
file opens in it on a double click (``--uninstall`` removes them again).

Files go under ``$XDG_DATA_HOME`` (default ``~/.local/share``): ``applications/masklens.desktop``
(its ``Exec`` names this installation's ``masklens``, ``gui %f``),
``icons/hicolor/scalable/apps/masklens.svg``, ``icons/hicolor/256x256/apps/masklens.png``,
``mime/packages/masklens-workspace.xml`` (the ``*.masklens`` type) and
``metainfo/io.github.masklens.masklens.metainfo.xml`` (AppStream). The desktop's caches of
MIME types and entries are refreshed when their tools are installed.
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


#: the AppStream metainfo's file name (its component id, reverse-DNS)
METAINFO = "io.github.masklens.masklens.metainfo.xml"
#: the shared-mime-info file of the workspace type
MIME_FILE = "masklens-workspace.xml"


def targets(base: Path | None = None) -> dict[str, Path]:
    """Bundled file name -> where it is installed."""
    base = base or data_home()
    return {
        "masklens.desktop": base / "applications" / "masklens.desktop",
        "masklens.svg": base / "icons" / "hicolor" / "scalable" / "apps" / "masklens.svg",
        "masklens.png": base / "icons" / "hicolor" / "256x256" / "apps" / "masklens.png",
        MIME_FILE: base / "mime" / "packages" / MIME_FILE,
        METAINFO: base / "metainfo" / METAINFO,
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


def desktop_entry(command: list[str] | None = None) -> str:
    """The bundled entry with ``Exec`` running ``command`` (default: this installation's
    masklens) with ``gui %f`` (the file a file manager opens with it, if any)."""
    from masklens.resources import DESKTOP_DIR

    lines = (DESKTOP_DIR / "masklens.desktop").read_text(encoding="utf-8").splitlines()
    exec_line = f"Exec={exec_value([*(command or executable()), 'gui'])} %f"
    return "\n".join(exec_line if ln.startswith("Exec=") else ln for ln in lines) + "\n"


def check_gui_installed() -> None:
    """Refuse (one line naming the ``[gui]`` extra) when this installation cannot open the
    window: the menu entry would start ``masklens gui`` and fail with no terminal to say why."""
    from masklens.core.runtime.extras import MissingExtraError, missing_for

    absent = missing_for("gui")
    if absent is not None:
        raise MissingExtraError("the menu entry (it starts `masklens gui`)", absent, "gui")


def install(base: Path | None = None) -> list[Path]:
    """Write the entry, icons, MIME type and metainfo (atomically, replacing earlier ones);
    returns the paths. Refused when the ``[gui]`` extra is missing (:func:`check_gui_installed`)."""
    check_gui_installed()
    written = write_share_files(base or data_home())
    refresh_caches(base or data_home())
    return written


def write_share_files(base: Path, command: list[str] | None = None) -> list[Path]:
    """The entry (``Exec`` running ``command``, default this installation's masklens), icons,
    MIME type and metainfo under the share folder ``base``; returns the paths."""
    from masklens.resources import DESKTOP_DIR

    out = targets(base)
    atomic_write_text(out["masklens.desktop"], desktop_entry(command))
    for name in ("masklens.svg", "masklens.png", MIME_FILE, METAINFO):
        atomic_write_bytes(out[name], (DESKTOP_DIR / name).read_bytes())
    return list(out.values())


def refresh_caches(base: Path) -> None:
    """Let the desktop see the new type and entry now: ``update-mime-database`` and
    ``update-desktop-database`` over ``base`` where they are installed (else it sees them when it
    next scans; nothing is lost)."""
    import subprocess

    for tool, folder in (("update-mime-database", base / "mime"),
                         ("update-desktop-database", base / "applications")):
        found = shutil.which(tool)
        if found:
            subprocess.run([found, str(folder)], check=False, capture_output=True)


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
    if removed:
        refresh_caches(base or data_home())
    return removed
