"""The committed demo is exactly what `python tools/demo/make_demo.py` regenerates."""

from __future__ import annotations

import filecmp
from pathlib import Path

from file_states import snapshot

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


def test_regenerating_over_an_earlier_demo_replaces_it(tmp_path, make_demo):
    make_demo.make_demo(tmp_path, only=["cafe"])
    (tmp_path / "cafe" / "ann.json").write_text("{}")  # an earlier demo's file, whatever its bytes
    make_demo.make_demo(tmp_path, only=["cafe"])
    assert (tmp_path / "cafe" / "ann.json").read_bytes() == (DEMO_DIR / "cafe" / "ann.json").read_bytes()


def test_a_folder_of_the_users_files_is_never_replaced(tmp_path, make_demo):
    """A folder named like a demo's that holds a file the generator does not write (the user's
    thesis, a reviewer's store beside the demo) was moved aside and deleted because it held an
    ann.json: it is refused in one line, byte for byte as it was."""
    import pytest

    from masklens.core.errors import MasklensError

    mine = tmp_path / "cafe"
    mine.mkdir()
    (mine / "ann.json").write_text('{"mine": true}')
    (mine / "thesis.tex").write_text("precious")
    before = snapshot(tmp_path)
    with pytest.raises(MasklensError, match=r"holds files the demo generator does not write \(thesis.tex\)"):
        make_demo.make_demo(tmp_path, only=["cafe"])
    assert snapshot(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cafe"]  # no staging folder left
    assert make_demo.main(["--out", str(tmp_path), "--only", "cafe"]) == 2  # one line, exit 2
    assert snapshot(tmp_path) == before


def test_a_private_device_node_is_never_replaced(tmp_path, make_demo):
    import os
    import stat

    import pytest

    from masklens.core.errors import MasklensError

    node = tmp_path / "cafe"
    try:
        os.mknod(node, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers, private to the test
    except PermissionError:
        pytest.skip("mknod needs privileges here")
    with pytest.raises(MasklensError, match="is not a folder"):
        make_demo.make_demo(tmp_path, only=["cafe"])
    assert stat.S_ISCHR(node.lstat().st_mode)
    with pytest.raises(MasklensError, match="is not a folder"):
        make_demo.make_demo(node, only=["cafe"])  # the output folder itself a device node
    assert stat.S_ISCHR(node.lstat().st_mode)


def test_each_demo_folder_has_its_generator_function(make_demo):
    import demo_cafe
    import demo_r2sm

    assert make_demo.GENERATORS["cafe"] is demo_cafe.write_cafe
    assert make_demo.GENERATORS["r2sm"] is demo_r2sm.write_r2sm
    assert set(make_demo.GENERATORS) == {"cafe", "pcs", "hallusegbench", "cgebench", "r2sm", "ovs"}
