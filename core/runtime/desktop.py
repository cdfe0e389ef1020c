"""``masklens install-desktop``: the desktop entry and icon in the user's XDG folders, so masklens
shows in the application menu with its icon (``--uninstall`` removes them again).

Files go under ``$XDG_DATA_HOME`` (default ``~/.local/share``): ``applications/masklens.desktop``
(its ``Exec`` names this installation's ``masklens``), ``icons/hicolor/scalable/apps/masklens.svg``
and ``icons/hicolor/256x256/apps/masklens.png``.
"""

from __future__ import annotations

import os
import shlex
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


def executable() -> str:
    """The command that starts this masklens: the ``masklens`` script beside this Python (a
    venv's), else the one on PATH, else ``python -m masklens``."""
    beside = Path(sys.executable).with_name("masklens")
    if beside.is_file():
        return shlex.quote(str(beside))
    found = shutil.which("masklens")
    return shlex.quote(found) if found else f"{shlex.quote(sys.executable)} -m masklens"


def desktop_entry() -> str:
    """The bundled entry with ``Exec`` pointing at this installation."""
    from masklens.resources import DESKTOP_DIR

    lines = (DESKTOP_DIR / "masklens.desktop").read_text(encoding="utf-8").splitlines()
    return "\n".join(f"Exec={executable()} gui" if ln.startswith("Exec=") else ln for ln in lines) + "\n"


def install(base: Path | None = None) -> list[Path]:
    """Write the entry and icons (atomically, replacing earlier ones); returns the paths."""
    from masklens.resources import DESKTOP_DIR

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
