"""Regenerate the bundled demo benchmark under resources/demo/ (deterministic).

    python tools/demo/make_demo.py [--out DIR] [--seed N] [--only cafe,pcs,...]

Each benchmark's folder is written to a temporary directory and swapped in
atomically. An existing folder is replaced only when it holds exactly the files the generator
writes (an earlier demo); a folder with anything else in it (a reviewer's store, a user's file)
or a path that is not a folder is refused in one line, and nothing is touched. The demo model's predictions are produced by running the `demo`
segmenter on the generated pixels (kept down to the ``DEMO_FLOOR`` score, as
``masklens predict KIND --model demo --score-threshold 0.05`` writes them).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # tools/demo/ is a folder of scripts, not a package

from demo_cafe import write_cafe  # noqa: E402
from demo_cge import write_cge  # noqa: E402
from demo_hallu import write_hallu  # noqa: E402
from demo_ovs import write_ovs  # noqa: E402
from demo_pcs import write_pcs  # noqa: E402
from demo_r2sm import write_r2sm  # noqa: E402

from masklens.core.errors import MasklensError  # noqa: E402
from masklens.core.files.io import replace_folder, temp_sibling_dir  # noqa: E402
from masklens.core.models.demo import DemoSegmenter  # noqa: E402
from masklens.resources import DEMO_DIR  # noqa: E402

SEED = 20260521
#: the committed predictions keep instances down to this score, so threshold sliders have material
DEMO_FLOOR = 0.05
#: folder -> its generator, which writes into an empty folder
GENERATORS: dict[str, Callable[[Path, int, DemoSegmenter], None]] = {
    "cafe": write_cafe,
    "pcs": write_pcs,
    "hallusegbench": write_hallu,
    "cgebench": write_cge,
    "r2sm": write_r2sm,
    "ovs": write_ovs,
}


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink()}


def _replace(target: Path, fresh: Path) -> None:
    """Put the generated folder ``fresh`` at ``target``: a new path, or an earlier demo (exactly
    the files the generator writes, whatever their bytes; the demo carries no output marker, its
    file list is the committed demo's); anything else is refused untouched."""
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise MasklensError("exists and is not a folder; not replacing it", path=target,
                            hint="give --out a folder of earlier demos, or a new one")
    if target.exists():
        extra = sorted(_files(target) - _files(fresh)) + sorted(
            str(p.relative_to(target)) for p in target.rglob("*") if not (p.is_file() or p.is_dir()))
        if extra:
            shown = ", ".join(extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
            raise MasklensError(f"holds files the demo generator does not write ({shown}); not replacing it",
                                path=target, hint="move them away, or give --out another folder")
    replace_folder(fresh, target)


def make_demo(out: Path = DEMO_DIR, seed: int = SEED, only: list[str] | None = None) -> list[str]:
    """Write every demo benchmark under ``out``; returns the folders written."""
    out = Path(out)
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise MasklensError("exists and is not a folder; the demo is written into a folder", path=out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for offset, name in enumerate(GENERATORS):
        if only and name not in only:
            continue
        target = out / name
        staging = temp_sibling_dir(target)
        try:
            fresh = staging / name
            fresh.mkdir()
            GENERATORS[name](fresh, seed + offset, DemoSegmenter(score_threshold=DEMO_FLOOR))
            _replace(target, fresh)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        written.append(name)
    for name in written:  # temp files/dirs are created private; the demo is for everyone to read
        for p in [out / name, *(out / name).rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEMO_DIR, help="output folder (default: resources/demo)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--only", default="", help="comma-separated subset, e.g. cafe,r2sm")
    args = parser.parse_args(argv)
    only = [s for s in args.only.split(",") if s] or None
    try:
        written = make_demo(args.out, args.seed, only)
    except MasklensError as exc:
        print(f"make_demo: {exc}", file=sys.stderr)
        return 2
    for name in written:
        print(f"wrote {args.out / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
