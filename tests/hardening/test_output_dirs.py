"""Outputs never destroy what masklens did not write: a folder ``--out`` is replaced only when
masklens wrote it (its marker) and never when it holds the run's inputs; a device or pipe
``--out`` is written to, never renamed over. Real files, the real CLI."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import stat
import threading
from pathlib import Path

import pytest
from file_states import snapshot

from masklens.core.cli import main
from masklens.core.files.output_dirs import MARKER
from masklens.core.kinds.demo import DEMO_DIR, demo_argv
from masklens.core.reports import FILES


def _err_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def _user_folder(path: Path) -> dict[str, bytes]:
    path.mkdir(parents=True, exist_ok=True)
    (path / "thesis.tex").write_text("precious")
    (path / "sub").mkdir()
    (path / "sub" / "data.csv").write_text("1,2\n")
    return snapshot(path)


@pytest.fixture
def hallu(tmp_path):
    root = tmp_path / "halluseg"
    shutil.copytree(DEMO_DIR / "hallusegbench", root)
    return root


def _report(out: Path, kind: str = "cafe", root: Path | None = None) -> int:
    return main(["report", kind, *demo_argv(kind, root=root), "--no-sweep", "--gallery", "0",
                 "--out", str(out)])


# ------------------------------------------------------------------ report --out DIR
def test_report_refuses_a_folder_of_the_users_own_files(tmp_path, capsys):
    mine = tmp_path / "mine"
    before = _user_folder(mine)
    assert _report(mine) != 0
    err = _err_line(capsys)
    assert "holds files masklens did not write there (sub/data.csv, thesis.tex)" in err and str(mine) in err
    assert snapshot(mine) == before


def test_report_replaces_only_what_it_wrote_in_its_own_folder(tmp_path, capsys):
    out = tmp_path / "rep"
    assert _report(out) == 0, capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == sorted([*FILES, MARKER])
    assert _report(out) == 0, capsys.readouterr().err  # its own folder, as written: replaced
    (out / "notes.txt").write_text("mine")  # a file of the user's added: refused, kept
    before = snapshot(out)
    assert _report(out) != 0
    assert "masklens did not write there (notes.txt)" in _err_line(capsys)
    assert snapshot(out) == before
    (out / "notes.txt").unlink()
    (out / "report.html").write_text("edited by the user")  # a file changed since: refused
    assert _report(out) != 0
    assert "report.html (changed since masklens wrote it)" in _err_line(capsys)
    assert (out / "report.html").read_text() == "edited by the user"


def test_a_copied_report_folder_or_marker_adopts_nothing(tmp_path, capsys):
    out = tmp_path / "rep"
    assert _report(out) == 0, capsys.readouterr().err
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)  # the marker is bound to the folder it was written in
    (copy / "my-notes.md").write_text("mine")
    before = snapshot(copy)
    assert _report(copy) != 0
    err = _err_line(capsys)
    assert "its .masklens-output.json belongs to another folder" in err and "my-notes.md" in err
    assert snapshot(copy) == before
    mine = tmp_path / "mine"  # a folder of the user's own summary.json: no name is adopted
    mine.mkdir()
    (mine / "summary.json").write_text('{"mine": 1}')
    shutil.copy(out / MARKER, mine / MARKER)
    assert _report(mine) != 0
    assert "summary.json" in _err_line(capsys)
    assert (mine / "summary.json").read_text() == '{"mine": 1}'


def test_report_never_replaces_the_folder_holding_its_inputs(tmp_path, capsys):
    data = tmp_path / "demo"
    shutil.copytree(DEMO_DIR / "cafe", data / "cafe")
    (data / MARKER).write_text("{}")  # even a folder that looks like masklens' own
    before = snapshot(data)
    assert _report(data, root=data) != 0
    err = _err_line(capsys)
    assert "this run's input" in err
    assert snapshot(data) == before
    assert _report(data / "cafe" / "images", root=data) != 0  # --out is the image folder
    assert snapshot(data) == before


def test_report_refuses_a_file_or_device_as_its_folder(tmp_path, capsys):
    f = tmp_path / "r.html"
    f.write_text("mine")
    assert _report(f) != 0
    assert "is a file" in _err_line(capsys) and f.read_text() == "mine"


def test_report_refuses_a_device_as_its_folder(null_device, capsys):
    assert _report(null_device) != 0
    assert "not a folder" in _err_line(capsys)
    assert stat.S_ISCHR(os.stat(null_device).st_mode)


# ------------------------------------------------------------------ predict / merge --out DIR
def _predict_hallu(hallu: Path, out: Path, *extra: str) -> int:
    return main(["predict", "hallusegbench", "--model", "demo", "--data", str(hallu / "data.json"),
                 "--root", str(hallu), "--no-cache", "--quiet", *extra, "--out", str(out)])


def test_predict_folder_output_never_replaces_the_dataset_or_the_users_folder(hallu, tmp_path, capsys):
    before = snapshot(hallu)
    assert _predict_hallu(hallu, hallu) != 0  # --out is the dataset folder itself
    assert "this run's input" in _err_line(capsys)
    assert snapshot(hallu) == before
    mine = tmp_path / "mine"
    mine_before = _user_folder(mine)
    assert _predict_hallu(hallu, mine) != 0
    assert "masklens did not write" in _err_line(capsys)
    assert snapshot(mine) == mine_before


def test_predict_replaces_its_own_folder_output(hallu, tmp_path, capsys):
    out = tmp_path / "preds"
    assert _predict_hallu(hallu, out) == 0, capsys.readouterr().err
    assert (out / MARKER).is_file()
    first = snapshot(out)
    assert _predict_hallu(hallu, out) == 0, capsys.readouterr().err
    again = snapshot(out)
    assert again.pop(MARKER) != first.pop(MARKER)  # bound to the new folder put in place
    assert again == first
    # score reads the folder back (the marker is not a prediction)
    assert main(["score", "hallusegbench", "--data", str(hallu / "data.json"), "--root", str(hallu),
                 "--pred-dir", str(out), "--out", str(tmp_path / "s.json")]) == 0
    assert json.loads((tmp_path / "s.json").read_text())["summary"]


def test_merge_never_writes_over_a_shard_it_reads(hallu, tmp_path, capsys):
    shards = [tmp_path / f"s{i}" for i in range(2)]
    for i, s in enumerate(shards):
        assert _predict_hallu(hallu, s, "--shard", f"{i}/2") == 0, capsys.readouterr().err
    before = snapshot(shards[0])
    rc = main(["merge", "hallusegbench", "--data", str(hallu / "data.json"), "--root", str(hallu),
               *(x for s in shards for x in ("--pred-dir", str(s))), "--out", str(shards[0])])
    assert rc != 0
    assert "this run's input" in _err_line(capsys)
    assert snapshot(shards[0]) == before


def test_predict_file_output_never_overwrites_its_annotation(tmp_path, capsys):
    data = tmp_path / "demo"
    shutil.copytree(DEMO_DIR / "cafe", data / "cafe")
    ann = data / "cafe" / "ann.json"
    before = ann.read_bytes()
    rc = main(["predict", "cafe", "--model", "demo", *demo_argv("cafe", with_predictions=False, root=data),
               "--no-cache", "--quiet", "--out", str(ann)])
    assert rc != 0
    assert "is this run's input" in _err_line(capsys)
    assert ann.read_bytes() == before


# ------------------------------------------------------------------ --out /dev/null, a FIFO
@pytest.fixture
def null_device(tmp_path):
    """A private char device equal to /dev/null (major 1, minor 3) in tmp_path: the tests never
    risk the system's own /dev/null; needs root (CAP_MKNOD), else skipped."""
    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError as exc:
        pytest.skip(f"cannot make a device node here: {exc.strerror}")
    return node


def test_score_and_predict_write_into_a_device_without_replacing_it(null_device, capsys):
    st = os.stat(null_device)
    assert main(["score", "cafe", *demo_argv("cafe"), "--out", str(null_device)]) == 0
    assert main(["predict", "cafe", "--model", "demo", *demo_argv("cafe", with_predictions=False),
                 "--no-cache", "--quiet", "--shard", "0/2", "--out", str(null_device)]) == 0, \
        capsys.readouterr().err
    after = os.stat(null_device)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == st.st_rdev and after.st_ino == st.st_ino
    assert sorted(p.name for p in null_device.parent.iterdir()) == ["null"]  # no temp, no record


def test_score_writes_into_a_fifo(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a reader (and writer) that never blocks
    got, done = bytearray(), threading.Event()

    def drain() -> None:  # while score writes (more than the pipe holds would block it)
        while not done.is_set():
            if select.select([fd], [], [], 0.05)[0]:
                got.extend(os.read(fd, 1 << 16))

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        rc = main(["score", "cafe", *demo_argv("cafe"), "--out", str(fifo)])
    finally:
        done.set()
        reader.join()
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(fd, 1 << 16):  # what is left in the pipe
                got.extend(chunk)
        os.close(fd)
    assert rc == 0, capsys.readouterr().err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still the pipe, not a file renamed over it
    assert json.loads(bytes(got))["summary"]


def test_evaluate_writes_only_into_a_folder_of_its_own(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MASKLENS_CACHE_DIR", str(tmp_path / "cache"))
    argv = ["evaluate", "cafe", *demo_argv("cafe", with_predictions=False), "--model", "demo", "--quiet"]
    mine = tmp_path / "mine"
    before = _user_folder(mine)
    (mine / "summary.json").write_text('{"mine": true}')
    before = snapshot(mine)
    assert main([*argv, "--out", str(mine)]) != 0
    assert "masklens did not write" in _err_line(capsys)
    assert snapshot(mine) == before
    out = tmp_path / "ev"
    assert main([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
    assert (out / MARKER).is_file() and (out / "summary.json").is_file()
    assert main([*argv, "--out", str(out)]) == 0, capsys.readouterr().err  # again: its own folder
