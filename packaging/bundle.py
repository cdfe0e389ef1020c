"""`make bundle`: masklens for a machine without Python.

    python packaging/bundle.py [--out DIR]

Builds ``packaging/masklens.spec`` with PyInstaller (a one-folder bundle of the core and the
window, the demo and replay backends; no torch) and packs it with the desktop entry, the icon,
the workspace MIME type and the AppStream metainfo into ``DIR/masklens-VERSION-linux-ARCH.tar.gz``
(default DIR: build/bundle). Prints the folder's and the tarball's size and the build time.
DIR must be new, empty or written by an earlier run: a folder of anything else, a file or a
device is refused in one line before anything is built (PyInstaller clears what it builds in).

The tarball unpacks to ``masklens-VERSION/``::

    masklens/masklens          the program (`masklens gui`, `masklens score` …): the launcher
                               (packaging/launcher.c) of masklens/masklens-bin, PyInstaller's
                               executable (without a C compiler: that executable itself)
    share/…                    the desktop entry, icons, MIME type and metainfo, as installed
    INSTALL.txt                how to add it to the application menu

``masklens/masklens install-desktop`` installs the entry, icon and MIME type for the user, its
``Exec`` pointing at the unpacked program.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tarfile
import time
from pathlib import Path

from launcher import NoLauncher, compile_launcher

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "packaging" / "masklens.spec"

INSTALL = """masklens {version}: inspect, prompt and score segmentation models (no Python needed)

  ./masklens/masklens gui --demo          the window on the bundled demo
  ./masklens/masklens score cafe --demo   a benchmark scored in the terminal
  ./masklens/masklens install-desktop     add masklens to the application menu; masklens
                                          workspace files then open in it

Live models (torch, transformers) are not in the bundle: point the window at a Python
environment that has `pip install 'masklens[models]'` (Evaluate > Model environment…, or the
MASKLENS_MODEL_PYTHON variable) and its models run there.
"""


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


#: PyInstaller's executable (packaging/masklens.spec), run by the launcher
FROZEN = "masklens-bin"


def build(out: Path) -> Path:
    """Run PyInstaller, then put the launcher in front of its executable; the one-folder
    bundle is ``out/dist/masklens``."""
    import PyInstaller.__main__

    PyInstaller.__main__.run([
        "--noconfirm", "--log-level", "WARN",
        "--distpath", str(out / "dist"), "--workpath", str(out / "work"), str(SPEC),
    ])
    bundle = out / "dist" / "masklens"
    add_launcher(bundle)
    return bundle


def add_launcher(bundle: Path) -> None:
    """``bundle/masklens``: the launcher of PyInstaller's executable, or, where no launcher
    can be built here, that executable renamed (a Ctrl+C in its first milliseconds is then
    Python's)."""
    try:
        compile_launcher(bundle / "masklens", FROZEN)
    except NoLauncher as exc:
        print(f"bundle: {exc}; masklens/masklens is PyInstaller's executable itself (a Ctrl+C "
              "in its first milliseconds is Python's)", file=sys.stderr)
        os.replace(bundle / FROZEN, bundle / "masklens")


def pack(bundle: Path, out: Path) -> Path:
    """The tarball of ``bundle`` and the desktop files (the layout in the module docstring)."""
    from masklens.core import __version__
    from masklens.core.runtime import desktop

    top = f"masklens-{__version__}"
    tarball = out / f"{top}-linux-{platform.machine()}.tar.gz"
    staging = out / "share-staging"
    shutil.rmtree(staging, ignore_errors=True)
    desktop.write_share_files(staging / "share", ["masklens"])
    (staging / "INSTALL.txt").write_text(INSTALL.format(version=__version__), encoding="utf-8")
    partial = tarball.with_name(tarball.name + ".partial")
    with tarfile.open(partial, "w:gz", compresslevel=6) as tar:
        tar.add(bundle, arcname=f"{top}/masklens")
        tar.add(staging / "share", arcname=f"{top}/share")
        tar.add(staging / "INSTALL.txt", arcname=f"{top}/INSTALL.txt")
    partial.replace(tarball)
    shutil.rmtree(staging)
    return tarball


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bundle")
    args = parser.parse_args(argv)
    from masklens.core.errors import MasklensError
    from masklens.core.files.output_dirs import check_replaceable, write_marker

    try:  # PyInstaller clears its dist/ and work/ there: only a folder this script wrote is reused
        check_replaceable(args.out)
    except MasklensError as exc:
        print(f"bundle: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    bundle = build(args.out)
    built = time.perf_counter() - start
    tarball = pack(bundle, args.out)
    total = time.perf_counter() - start
    mb = 1024 * 1024
    print(f"bundle: {bundle} ({folder_size(bundle) / mb:.0f} MB), built in {built:.0f} s", file=sys.stderr)
    for scratch in ("work", "dist"):  # PyInstaller's folders (links into the tree): the tarball is the bundle
        shutil.rmtree(args.out / scratch, ignore_errors=True)
    write_marker(args.out, "bundle")  # what this script wrote there: the next build may replace it
    print(f"tarball: {tarball} ({tarball.stat().st_size / mb:.0f} MB), {total:.0f} s in all", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
