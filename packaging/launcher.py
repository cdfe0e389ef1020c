"""The ``masklens`` launcher (packaging/launcher.c), compiled and put in place.

    python packaging/launcher.py venv VENV          `make setup`: VENV/bin/masklens
    python packaging/launcher.py build OUT TARGET   the launcher as OUT, running TARGET

The launcher blocks SIGINT and runs the real program in its place, so that a Ctrl+C while the
Python interpreter starts is still masklens' "interrupted" (docs/reliability-paths.md, Logs,
signals). TARGET is relative to OUT's folder, or absolute.

``venv``: the console script pip wrote as VENV/bin/masklens moves to VENV/libexec/masklens
(its name stays ``masklens``, by which the program knows itself) and the launcher takes its
place, running it. Run again after pip rewrote the script (``make setup`` after a pyproject
change), the new script replaces the one moved before; with the launcher in place and nothing
new, it only rebuilds the launcher. Without a C compiler (``$CC``, else ``cc``), or where it
fails, one line says so and pip's script stays: masklens works as before, only a Ctrl+C in
the interpreter's first milliseconds is Python's.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

SOURCE = Path(__file__).resolve().with_name("launcher.c")
#: where ``venv`` puts pip's console script, relative to VENV/bin
VENV_TARGET = "../libexec/masklens"


class NoLauncher(Exception):
    """No launcher can be built here (no C compiler, or it failed): the reason, one line."""


class Refused(Exception):
    """A path that is neither absent nor what this script wrote or pip wrote: nothing is
    changed (one line, exit 2)."""


#: bytes only the compiled launcher.c holds (its message when it cannot start its program)
LAUNCHER_MARK = b"masklens: cannot start "
#: what pip's console script for masklens holds (``from masklens.core.cli import main``)
SCRIPT_MARK = b"masklens.core.cli"


def c_string(text: str) -> str:
    """``text`` as a C string literal (its UTF-8 bytes; quotes, backslashes and control
    characters escaped)."""
    out = []
    for byte in text.encode():
        char = chr(byte)
        out.append("\\" + char if char in '"\\?' else char if 32 <= byte < 127 else f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def kind_of(path: Path) -> str | None:
    """``"launcher"`` (a launcher built here), ``"script"`` (pip's console script for masklens),
    None where nothing is there; :class:`Refused` for anything else (a user's file or folder, a
    symlink, a device node, a FIFO: never opened, never replaced)."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise Refused(f"{path} is not a regular file: it is not masklens' to replace; nothing was changed")
    with path.open("rb") as f:
        head = f.read(1 << 20)
    if head.startswith(b"\x7fELF") and LAUNCHER_MARK in head:
        return "launcher"
    if head.startswith(b"#!") and SCRIPT_MARK in head:
        return "script"
    raise Refused(f"{path} is neither masklens' launcher nor pip's masklens script: it is not masklens' "
                  "to replace; nothing was changed")


def compile_launcher(out: Path, target: str) -> Path:
    """The launcher compiled as ``out`` (written whole, then moved into place), running
    ``target``; :class:`Refused` where ``out`` is something else than a launcher built before,
    :class:`NoLauncher` where no launcher can be built here."""
    if kind_of(out) not in (None, "launcher"):
        raise Refused(f"{out} is pip's script, not a launcher: run `packaging/launcher.py venv` instead")
    partial = build_partial(out, target)
    partial.replace(out)
    return out


def build_partial(beside: Path, target: str) -> Path:
    """The launcher running ``target``, compiled beside ``beside`` under a name of this process'
    own (moved into place by the caller)."""
    cc = shlex.split(os.environ.get("CC") or "cc")
    if not cc or shutil.which(cc[0]) is None:
        raise NoLauncher(f"no C compiler ({cc[0] if cc else '$CC is blank'})")
    partial = beside.with_name(f".{beside.name}.{os.getpid()}.partial")
    run = subprocess.run([*cc, "-O2", "-Wall", f"-DTARGET={c_string(target)}", "-o", str(partial), str(SOURCE)],
                         capture_output=True, text=True, check=False)
    if run.returncode != 0:
        partial.unlink(missing_ok=True)
        lines = [line for line in run.stderr.splitlines() if "error" in line] or run.stderr.splitlines() or [""]
        raise NoLauncher(f"{cc[0]} failed: {lines[0].strip()}")
    return partial


def install_in_venv(venv: Path) -> Path:
    """VENV/bin/masklens made the launcher of pip's console script (see the module docstring).
    Every path is checked first: VENV/bin/masklens must be the launcher or pip's script, and
    VENV/libexec/masklens, where pip's script goes, nothing or a script moved there before."""
    entry = venv / "bin" / "masklens"
    script = Path(os.path.normpath(entry.parent / VENV_TARGET))
    found = kind_of(entry)
    new_script = found == "script"
    if found is None:
        raise Refused(f"{entry} is missing: install masklens (pip install -e .) first")
    if new_script:
        if script.parent.is_symlink() or (script.parent.exists() and not script.parent.is_dir()):
            raise Refused(f"{script.parent} is not a folder of this environment; nothing was changed")
        if kind_of(script) not in (None, "script"):
            raise Refused(f"{script} is not pip's script moved there before; nothing was changed")
    built = build_partial(entry, VENV_TARGET)
    if new_script:  # pip's script, new: it becomes the launcher's target
        script.parent.mkdir(exist_ok=True)
        entry.replace(script)
    built.replace(entry)
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="packaging/launcher.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    venv = sub.add_parser("venv", help="make VENV/bin/masklens the launcher of pip's console script")
    venv.add_argument("venv", type=Path)
    build = sub.add_parser("build", help="compile the launcher as OUT, running TARGET")
    build.add_argument("out", type=Path)
    build.add_argument("target")
    args = parser.parse_args(argv)
    entry = args.venv / "bin" / "masklens" if args.what == "venv" else None
    try:
        if entry is not None and kind_of(entry) == "launcher" and kind_of(entry.parent / VENV_TARGET) != "script":
            print(f"masklens launcher: {entry} is a launcher without its script "
                  f"{os.path.normpath(entry.parent / VENV_TARGET)}: reinstall "
                  "masklens (pip install -e .), then run this again", file=sys.stderr)
            return 1
        if entry is not None:
            install_in_venv(args.venv)
        else:
            compile_launcher(args.out, args.target)
    except Refused as exc:
        print(f"masklens launcher: {exc}", file=sys.stderr)
        return 2
    except NoLauncher as exc:
        if args.what == "build":
            print(f"masklens launcher: {exc}", file=sys.stderr)
            return 1
        assert entry is not None
        kept = "keeps the launcher built before" if kind_of(entry) == "launcher" else (
            "stays pip's console script (a Ctrl+C in the interpreter's first milliseconds is Python's)")
        print(f"masklens launcher: {exc}; {entry} {kept}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
