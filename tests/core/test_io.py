"""Atomic writes: whole files or nothing, the user's usual permissions, clear errors."""

import json
import os
import stat

import pytest

from masklens.core.errors import DataFormatError, MasklensError
from masklens.core.files.io import atomic_directory, atomic_write_json, read_json, replace_folder
from masklens.core.masks import Mask, intersect_all, union_all
from masklens.core.scoring import contract as scoring


def test_json_written_whole_with_nan_as_null(tmp_path):
    out = tmp_path / "sub" / "r.json"
    atomic_write_json(out, {"a": float("nan"), "b": [1.5, float("inf")]})
    assert json.loads(out.read_text()) == {"a": None, "b": [1.5, None]}
    assert [p.name for p in out.parent.iterdir()] == ["r.json"]  # no temp file left


def test_written_files_follow_the_umask_not_mkstemp(tmp_path):
    old = os.umask(0o022)
    try:
        import importlib

        import masklens.core.files.io as io_mod

        importlib.reload(io_mod)
        io_mod.atomic_write_json(tmp_path / "r.json", {})
        with io_mod.atomic_directory(tmp_path / "rep") as d:
            (d / "x").write_text("x")
    finally:
        os.umask(old)
        importlib.reload(io_mod)
    assert stat.S_IMODE((tmp_path / "r.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "rep").stat().st_mode) == 0o755


def test_unwritable_destinations_are_clear_errors(tmp_path):
    (tmp_path / "dir").mkdir()
    with pytest.raises(MasklensError, match="is a directory"):
        atomic_write_json(tmp_path / "dir", {})
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(MasklensError, match="cannot write output"):
        atomic_write_json(blocker / "r.json", {})  # parent is a file
    with pytest.raises(MasklensError, match="cannot write output"), atomic_directory(blocker / "rep"):
        pass


def test_atomic_directory_keeps_the_old_output_on_failure(tmp_path):
    target = tmp_path / "rep"
    with atomic_directory(target) as d:
        (d / "a.txt").write_text("first")
    with pytest.raises(RuntimeError), atomic_directory(target) as d:
        (d / "a.txt").write_text("half")
        raise RuntimeError("crash while writing")
    assert (target / "a.txt").read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


def test_replace_folder_swaps_a_folder_in_and_leaves_nothing_beside(tmp_path):
    target, fresh = tmp_path / "out", tmp_path / ".out.staging" / "out"
    target.mkdir()
    (target / "old.txt").write_text("old")
    fresh.mkdir(parents=True)
    (fresh / "new.txt").write_text("new")
    replace_folder(fresh, target)
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]
    assert list(fresh.parent.iterdir()) == []  # the previous folder is gone, not set aside


def test_replace_folder_puts_the_previous_folder_back_when_the_new_one_cannot_move(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "a.txt").write_text("kept")
    staging = tmp_path / ".out.staging"
    staging.mkdir()
    with pytest.raises(OSError):
        replace_folder(staging / "out", target)  # nothing was staged
    assert (target / "a.txt").read_text() == "kept"
    assert list(staging.iterdir()) == []


def test_read_json_errors_name_the_file(tmp_path):
    bad = tmp_path / "t.json"
    bad.write_text('{"images": [1, 2')
    with pytest.raises(DataFormatError, match="t.json.*not valid JSON"):
        read_json(bad)
    with pytest.raises(DataFormatError, match="not found"):
        read_json(tmp_path / "missing.json")


def test_a_broken_kind_module_does_not_take_the_others_down(tmp_path, monkeypatch, capsys):
    (tmp_path / "broken_kind_mod.py").write_text("raise NameError('half-edited plug-in')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(scoring, "KINDS", scoring.KINDS.copy())
    scoring.register_kind("broken", "broken_kind_mod")
    names = [k.name for k in scoring.available_kinds()]
    assert "broken" not in names and "cafe" in names
    assert "benchmark kind 'broken' unavailable" in capsys.readouterr().err


def test_masks_of_different_sizes_are_refused():
    a, b = Mask.empty(10, 12), Mask.empty(320, 320)
    with pytest.raises(ValueError, match="resize first"):
        union_all([a, b], 320, 320)
    with pytest.raises(ValueError, match="resize first"):
        intersect_all([b, a])


def _private_device(path):
    """A private character device (1, 3), as /dev/null is; None where none can be made here."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except (PermissionError, AttributeError, OSError):
        return None
    return path


@pytest.mark.parametrize("what", ["file", "link to the user's folder", "device node"])
def test_replace_folder_never_moves_what_is_not_a_folder(tmp_path, what):
    """Its callers check the target first; if something else is there by the swap, it stays."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    target = tmp_path / "out"
    if what == "file":
        target.write_text("the user's file")
    elif what == "device node":
        if _private_device(target) is None:
            pytest.skip("no device node can be made here")
    else:
        target.symlink_to(mine, target_is_directory=True)
    before = os.lstat(target)
    staging = tmp_path / ".out.staging"
    (staging / "out").mkdir(parents=True)
    with pytest.raises(NotADirectoryError):
        replace_folder(staging / "out", target)
    after = os.lstat(target)
    assert (after.st_ino, after.st_mode, after.st_rdev) == (before.st_ino, before.st_mode, before.st_rdev)
    assert (mine / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in staging.iterdir()) == ["out"]  # nothing of the user's moved in
