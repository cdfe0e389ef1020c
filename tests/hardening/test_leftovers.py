"""Leftover staging folders of a killed folder write are cleaned up (or the previous output put
back) by the next run that writes there; a full disk is reported naming --out."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from masklens.core.cli import main
from masklens.core.errors import MasklensError
from masklens.core.files.io import LEGACY_STALE_S, atomic_directory, remove_stale_temps
from masklens.core.files.output_dirs import MARKER

from .conftest import fill

demo = pytest.importorskip("masklens.core.kinds.demo")
pytestmark = pytest.mark.skipif("hallusegbench" not in demo.demo_kinds(), reason="no demo")


def _predict(out: Path, cache: Path) -> int:
    argv = demo.demo_argv("hallusegbench", with_predictions=False)
    return main(["predict", "hallusegbench", "--model", "demo", *argv, "--quiet",
                 "--cache-dir", str(cache), "--out", str(out)])


def _tree(d: Path) -> dict[str, bytes]:
    """The files of an output folder (its marker left out: it names the folder it is in)."""
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*"))
            if p.is_file() and p.name != MARKER}


def test_killed_final_move_is_repaired_by_the_next_run(tmp_path):
    """A real SIGKILL between 'previous output moved aside' and 'new output moved in'."""
    out = tmp_path / "preddir"
    assert _predict(out, tmp_path / "cache") == 0
    before = _tree(out)
    script = textwrap.dedent(f"""
        import os, signal
        from pathlib import Path
        from masklens.core.inference.prediction_io import write_atomically
        real = os.replace
        def replace(src, dst):
            real(src, dst)
            if Path(dst).name == ".previous":  # the old output is aside: die now
                os.kill(os.getpid(), signal.SIGKILL)
        os.replace = replace
        class K:
            name = "k"
            def write_predictions(self, b, p, staged):
                staged.mkdir(); (staged / "partial.png").write_bytes(b"x"); return []
        write_atomically(K(), None, None, Path({str(out)!r}))
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert r.returncode == -signal.SIGKILL
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".preddir.")]
    assert len(left) == 1 and left[0].endswith(".tmp") and not out.exists()
    # a legacy leftover (no pid in its name) and one of a dead process are removed too
    legacy, fresh_legacy = tmp_path / ".preddir.abcd1234.tmp", tmp_path / ".preddir.efgh5678.tmp"
    legacy.mkdir()
    fresh_legacy.mkdir()  # might be an older masklens writing right now: kept for a while
    os.utime(legacy, (time.time() - LEGACY_STALE_S - 5,) * 2)
    (tmp_path / ".preddir.2147483646.zz.tmp").mkdir()
    assert _predict(out, tmp_path / "cache") == 0
    assert _tree(out) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".preddir")] == [fresh_legacy.name]


def test_a_live_writers_staging_folder_is_left_alone(tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = tmp_path / f".rep.{sleeper.pid}.abc.tmp"
        live.mkdir()
        dead_old = tmp_path / ".rep.old-2147483646"
        dead_old.mkdir()
        (dead_old / "report.html").write_text("previous")
        removed = remove_stale_temps(tmp_path / "rep")
        assert live.is_dir()
        assert removed == [dead_old]
        assert (tmp_path / "rep" / "report.html").read_text() == "previous"  # put back
    finally:
        sleeper.kill()
        sleeper.wait()
    assert remove_stale_temps(tmp_path / "rep") == [live]


def test_disk_full_names_the_output_and_keeps_the_previous_one(tiny_fs, tmp_path, capsys):
    out = tiny_fs / "preddir"
    assert _predict(out, tmp_path / "cache") == 0
    before = _tree(out)
    fill(tiny_fs)
    capsys.readouterr()
    assert _predict(out, tmp_path / "cache") == 2
    err = capsys.readouterr().err
    assert "disk full while writing" in err and f"{out}:" in err and ".tmp" not in err, err
    assert _tree(out) == before
    assert sorted(p.name for p in tiny_fs.iterdir()) == ["filler", "preddir"]


def test_disk_full_in_a_report_folder_names_the_folder(tiny_fs):
    fill(tiny_fs)
    target = tiny_fs / "report"
    with pytest.raises(MasklensError) as info, atomic_directory(target) as tmp:
        (tmp / "report.html").write_bytes(b"x" * 1_000_000)
    msg = str(info.value)
    assert msg.startswith(f"{target}:") and "disk full while writing" in msg and ".tmp" not in msg
    assert sorted(p.name for p in tiny_fs.iterdir()) == ["filler"]


def test_evaluate_on_a_full_disk_keeps_the_previous_evaluation_whole(tiny_fs, tmp_path, capsys):
    """The evaluation folder is built beside its place and put there in one step: a disk that
    fills up mid-way leaves the previous folder exactly as it was, nothing half-updated."""
    out = tiny_fs / "ev"
    argv = ["evaluate", "cafe", *demo.demo_argv("cafe", with_predictions=False), "--model", "demo",
            "--no-cache", "--quiet", "--out", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    fill(tiny_fs, leave=8192)  # room for a few files of the new evaluation, not for all of it
    assert main([*argv[:-2], "--model", "demo", "--label", "a", "--label", "b",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "disk full" in err and str(out) in err and "Traceback" not in err
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tiny_fs.iterdir()) == ["ev", "filler"]
