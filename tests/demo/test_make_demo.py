"""The committed demo is exactly what `python tools/demo/make_demo.py` regenerates."""

from __future__ import annotations

import filecmp
from pathlib import Path

from masklens.core.kinds.demo import DEMO_DIR


def _files(root: Path) -> dict[str, Path]:
    """Generated files (reviewers' verdict stores that core/review/store.py keeps beside the data are not)."""
    return {
        str(p.relative_to(root)): p
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".masklens-reviews." not in p.name
    }


def test_regenerated_demo_is_byte_identical(tmp_path, make_demo):
    written = make_demo.make_demo(tmp_path)
    assert {"cafe", "pcs", "hallusegbench", "cgebench", "r2sm"} <= set(written)
    for name in written:
        fresh, committed = _files(tmp_path / name), _files(DEMO_DIR / name)
        assert sorted(fresh) == sorted(committed), f"{name}: file lists differ"
        differ = [rel for rel in fresh if not filecmp.cmp(fresh[rel], committed[rel], shallow=False)]
        assert differ == [], f"{name}: regenerated files differ from the committed demo: {differ[:5]}"


def test_generation_is_seeded(tmp_path, make_demo):
    make_demo.make_demo(tmp_path / "a", seed=7, only=["cafe"])
    make_demo.make_demo(tmp_path / "b", seed=7, only=["cafe"])
    make_demo.make_demo(tmp_path / "c", seed=8, only=["cafe"])
    a, b, c = (
        (tmp_path / x / "cafe" / "ann.json").read_bytes() for x in ("a", "b", "c")
    )
    assert a == b
    assert a != c


def test_demo_is_small():
    total = sum(p.stat().st_size for p in DEMO_DIR.rglob("*") if p.is_file())
    assert total < 5 * 1024 * 1024, f"demo is {total / 1e6:.1f} MB"
