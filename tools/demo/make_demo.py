"""Regenerate the bundled demo benchmark under resources/demo/ (deterministic).

    python tools/demo/make_demo.py [--out DIR] [--seed N] [--only cafe,pcs,...]

Each benchmark's folder is written to a temporary directory and swapped in
atomically. The demo model's predictions are produced by running the `demo`
segmenter on the generated pixels (kept down to the ``DEMO_FLOOR`` score, as
``masklens predict KIND --model demo --score-threshold 0.05`` writes them).
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # tools/demo/ is a folder of scripts, not a package

from masklens.core.files.io import atomic_directory  # noqa: E402
from masklens.core.models.demo import DemoSegmenter  # noqa: E402
from masklens.resources import DEMO_DIR  # noqa: E402

SEED = 20260521
#: the committed predictions keep instances down to this score, so threshold sliders have material
DEMO_FLOOR = 0.05
#: folder -> (generator module, function name); each writes into an empty folder
GENERATORS: dict[str, tuple[str, str]] = {
    "cafe": ("demo_cafe", "write_cafe"),
    "pcs": ("demo_pcs", "write_pcs"),
    "hallusegbench": ("demo_hallu", "write_hallu"),
    "cgebench": ("demo_cge", "write_cge"),
    "r2sm": ("demo_r2sm", "write_r2sm"),
    "ovs": ("demo_ovs", "write_ovs"),
}


def _generator(name: str) -> Callable[..., None]:
    module, func = GENERATORS[name]
    return getattr(importlib.import_module(module), func)


def _is_demo(folder: Path) -> bool:
    """A demo folder this script wrote (it holds the kind's first file), replaced on regeneration."""
    return any((folder / f).is_file() for f in ("ann.json", "data.json", "gold_annotator_1.json"))


def make_demo(out: Path = DEMO_DIR, seed: int = SEED, only: list[str] | None = None) -> list[str]:
    """Write every demo benchmark under ``out``; returns the folders written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for offset, name in enumerate(GENERATORS):
        if only and name not in only:
            continue
        # the demo's own folders (no marker: the file list is the committed demo's); an earlier
        # demo is moved aside first and put back when the new one cannot be written
        target = out / name
        previous = target.with_name(f".{name}.previous") if _is_demo(target) else None
        if previous is not None:
            os.replace(target, previous)
        try:
            with atomic_directory(target, what="demo", marker=False) as tmp:
                _generator(name)(tmp, seed + offset, DemoSegmenter(score_threshold=DEMO_FLOOR))
        except BaseException:
            if previous is not None:
                os.replace(previous, target)
            raise
        if previous is not None:
            shutil.rmtree(previous)
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
    for name in make_demo(args.out, args.seed, only):
        print(f"wrote {args.out / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
