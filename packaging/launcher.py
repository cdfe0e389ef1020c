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
import subprocess
import sys
from pathlib import Path

SOURCE = Path(__file__).resolve().with_name("launcher.c")
#: where ``venv`` puts pip's console script, relative to VENV/bin
VENV_TARGET = "../libexec/masklens"


class NoLauncher(Exception):
    """No launcher can be built here (no C compiler, or it failed): the reason, one line."""


def c_string(text: str) -> str:
    """``text`` as a C string literal (its UTF-8 bytes; quotes, backslashes and control
    characters escaped)."""
    out = []
    for byte in text.encode():
        char = chr(byte)
        out.append("\\" + char if char in '"\\?' else char if 32 <= byte < 127 else f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def compile_launcher(out: Path, target: str) -> Path:
    """The launcher compiled as ``out`` (written whole, then moved into place), running
    ``target``; :class:`NoLauncher` where that cannot be done here."""
    cc = shlex.split(os.environ.get("CC") or "cc")
    if not cc or shutil.which(cc[0]) is None:
        raise NoLauncher(f"no C compiler ({cc[0] if cc else '$CC is blank'})")
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    run = subprocess.run([*cc, "-O2", "-Wall", f"-DTARGET={c_string(target)}", "-o", str(partial), str(SOURCE)],
                         capture_output=True, text=True, check=False)
    if run.returncode != 0:
        partial.unlink(missing_ok=True)
        lines = [line for line in run.stderr.splitlines() if "error" in line] or run.stderr.splitlines() or [""]
        raise NoLauncher(f"{cc[0]} failed: {lines[0].strip()}")
    partial.replace(out)
    return out


def is_launcher(path: Path) -> bool:
    """``path`` is a compiled program (the launcher), not a script."""
    with path.open("rb") as f:
        return f.read(4) == b"\x7fELF"


def install_in_venv(venv: Path) -> Path:
    """VENV/bin/masklens made the launcher of pip's console script (see the module docstring)."""
    entry = venv / "bin" / "masklens"
    script = (entry.parent / VENV_TARGET).resolve()
    built = compile_launcher(entry.with_name("masklens.launcher"), VENV_TARGET)
    if not is_launcher(entry):  # pip's script, new: it becomes the launcher's target
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
    if entry is not None and is_launcher(entry) and not (entry.parent / VENV_TARGET).is_file():
        print(f"masklens launcher: {entry} is a launcher without its script "
              f"{(entry.parent / VENV_TARGET).resolve()}: reinstall "
              "masklens (pip install -e .), then run this again", file=sys.stderr)
        return 1
    try:
        if entry is not None:
            install_in_venv(args.venv)
        else:
            compile_launcher(args.out, args.target)
    except NoLauncher as exc:
        if args.what == "build":
            print(f"masklens launcher: {exc}", file=sys.stderr)
            return 1
        assert entry is not None
        kept = "keeps the launcher built before" if is_launcher(entry) else (
            "stays pip's console script (a Ctrl+C in the interpreter's first milliseconds is Python's)")
        print(f"masklens launcher: {exc}; {entry} {kept}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
