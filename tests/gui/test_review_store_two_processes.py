"""The window and `masklens review` commands (summary, queue, check) share a review store: the window reopens the same
benchmark, records verdicts, and a command run beside it (another process) sees every one of
them; the store is never "malformed", and the window holds one connection to the file, whose
WAL is never deleted under it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from test_gui_defects import canvas, focus, open_demo

from masklens.core.review.locations import benchmark_key

pytest.importorskip("masklens.core.kinds.demo")
needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")


def masklens(*args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("masklens")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "masklens"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=300, env=dict(os.environ))


def fds_on(path: Path) -> dict[str, int]:
    """This process' open files beside ``path`` (the store, its -wal and -shm) -> how many
    descriptors; a deleted one is named "... (deleted)"."""
    out: dict[str, int] = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(path)):
            name = target[len(str(path.parent)) + 1:]
            out[name] = out.get(name, 0) + 1
    return out


def summary_counts(store: Path) -> dict[tuple[str, str, str], int]:
    """`masklens review summary STORE` run as its own process: (benchmark, reviewer, verdict) -> count."""
    got = masklens("review", "summary", str(store))
    assert got.returncode == 0, got.stderr
    assert "malformed" not in got.stderr + got.stdout
    rows = [line.split() for line in got.stdout.splitlines()[2:] if line.strip()]
    return {(r[0], r[1], r[2]): int(r[3]) for r in rows}


def _demo_as_ana(w, qtbot) -> tuple[Path, str, list[str]]:
    """The CAFE demo open, reviewer ana typed in: (its store file, benchmark key, sample ids)."""
    open_demo(w, qtbot, "cafe")
    w.review_panel.reviewer.setText("ana")
    return Path(w.state.review_store.path).resolve(), benchmark_key(w.state.benchmark), \
        [s.id for s in w.state.benchmark.samples]


@needs_proc
def test_a_command_beside_the_window_sees_every_verdict_after_a_reopen(window, qtbot, no_internal_errors):
    w = window
    path, key, ids = _demo_as_ana(w, qtbot)
    focus(w, qtbot, canvas(w))
    qtbot.keyClick(canvas(w), Qt.Key.Key_M)  # Model wrong, on the first sample
    first = w.state.review_store
    open_demo(w, qtbot, "cafe")  # the same benchmark again: the same store file
    assert w.state.review_store is not first and Path(w.state.review_store.path).resolve() == path
    assert fds_on(path) == {path.name: 1, f"{path.name}-wal": 1, f"{path.name}-shm": 1}
    expected = {(key, "ana", "model_wrong"): 1}
    assert summary_counts(path) == expected

    for round_, sid in enumerate(ids[1:4], start=1):
        w.state.review_store.record(key, sid, "fine", reviewer="ana")
        expected[(key, "ana", "fine")] = round_
        assert summary_counts(path) == expected  # the other process sees each verdict
        assert all("(deleted)" not in name for name in fds_on(path))  # the WAL in use is still there
        assert fds_on(path)[path.name] == 1  # one connection to the store
    w.state.review_store.assign(key, ids, ["ana"])
    queue = masklens("review", "queue", str(path), "--benchmark", key)
    assert queue.returncode == 0 and "malformed" not in queue.stderr, queue.stderr
    assert queue.stdout.split("\n")[2].split()[:3] == ["ana", "4", str(len(ids))]  # done, queued
    w.state.review_store.record(key, ids[0], "gt_wrong", reviewer="bo")
    check = masklens("review", "check", str(path))
    assert check.returncode == 0 and ": ok" in check.stdout, check.stdout + check.stderr
    assert summary_counts(path)[(key, "bo", "gt_wrong")] == 1
    assert len(w.state.review_store.history(key)) == 5  # nothing lost in this process either


@needs_proc
@pytest.mark.parametrize("reopens", [5])
def test_verdicts_stay_visible_to_commands_beside_the_window_after_many_reopens(
        window, qtbot, no_internal_errors, reopens):
    """File › Open demo again and again; after each reopen `masklens review queue` runs beside
    the window (its open and close is what once let another process delete the WAL the window
    still wrote to), the window records a verdict, and `masklens review summary` in yet another
    process must see it at once. A lost or invisible verdict, a deleted -wal or -shm held open,
    a second connection to the file or a "malformed" store fails the test."""
    w = window
    path, key, ids = _demo_as_ana(w, qtbot)
    w.state.review_store.assign(key, ids, ["ana", "bo"])
    expected: dict[tuple[str, str, str], int] = {}
    for n in range(1, reopens + 1):
        before = w.state.review_store
        open_demo(w, qtbot, "cafe")  # the same benchmark again: the same store file
        assert w.state.review_store is not before
        assert Path(w.state.review_store.path).resolve() == path
        del before
        queue = masklens("review", "queue", str(path), "--benchmark", key)
        assert queue.returncode == 0, queue.stderr
        assert "malformed" not in queue.stderr + queue.stdout
        w.state.review_store.record(key, ids[n], "fine", reviewer="ana")
        expected[(key, "ana", "fine")] = n
        assert summary_counts(path) == expected, f"after reopen {n}"
        held = fds_on(path)
        assert all("(deleted)" not in name for name in held), held
        assert held.get(path.name) == 1, held  # one connection to the file, however often opened
    check = masklens("review", "check", str(path))
    assert check.returncode == 0 and ": ok" in check.stdout, check.stdout + check.stderr
    assert len(w.state.review_store.history(key)) == reopens
