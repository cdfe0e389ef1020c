"""The desktop bundle (`make bundle`) as a machine without Python runs it: unpacked from its
tarball and started with a PATH that holds no Python and no virtual environment, PYTHONHOME and
PYTHONPATH unset, it opens the window on the demo (offscreen, a screenshot), scores the demo and
writes a report; it stays within 600 MB. `make test-bundle` builds the bundle and runs these
(``MASKLENS_BUNDLE`` names the tarball); `make test` alone skips them."""

from __future__ import annotations

import os
import signal
import subprocess
import tarfile
from pathlib import Path

import pytest
from process_signals import sigint_taken_over

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "resources" / "demo"
BUNDLE = os.environ.get("MASKLENS_BUNDLE")
#: the bundle's size target (the unpacked folder)
MAX_BYTES = 600 * 1024 * 1024

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not BUNDLE, reason="`make test-bundle` builds the bundle and runs these "
                                          "(MASKLENS_BUNDLE names its tarball)"),
]


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory) -> Path:
    """The tarball's top folder, unpacked into a scratch folder."""
    target = tmp_path_factory.mktemp("bundle")
    with tarfile.open(str(BUNDLE)) as tar:
        tar.extractall(target, filter="tar")
    (top,) = target.iterdir()
    return top


def _has_python(folder: str) -> bool:
    d = Path(folder)
    return (d.parent / "pyvenv.cfg").exists() or any(d.glob("python*"))


def _environment(home: Path) -> dict[str, str]:
    """The environment of a user without Python, at home in ``home``."""
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and not _has_python(p))
    assert not any(_has_python(p) for p in path.split(os.pathsep) if p)
    return {"PATH": path, "HOME": str(home), "LANG": "C.UTF-8", "QT_QPA_PLATFORM": "offscreen",
            "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"),
            "XDG_CACHE_HOME": str(home / "cache"), "XDG_STATE_HOME": str(home / "state")}


def _run(unpacked: Path, home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """The bundled program, as a user without Python starts it."""
    return subprocess.run([str(unpacked / "masklens" / "masklens"), *argv], env=_environment(home), cwd=home,
                          capture_output=True, text=True, timeout=300)


def test_the_window_opens_on_the_demo(unpacked, tmp_path):
    from PIL import Image

    shot = tmp_path / "window.png"
    run = _run(unpacked, tmp_path, "gui", "--demo", "--kind", "cafe", "--screenshot", str(shot))
    assert run.returncode == 0, run.stderr
    with Image.open(shot) as im:
        assert im.size == (1600, 1000)
        assert len(im.convert("RGB").getcolors(1 << 16) or []) > 50  # a window, not a blank


def test_score_demo_gives_the_numbers_of_the_installed_package(unpacked, tmp_path, capsys):
    from masklens.core.cli import main

    run = _run(unpacked, tmp_path, "score", "cafe", "--demo")
    assert run.returncode == 0, run.stderr
    assert main(["score", "cafe", "--demo"]) == 0
    assert run.stdout == capsys.readouterr().out


def test_report(unpacked, tmp_path):
    out = tmp_path / "report"
    run = _run(unpacked, tmp_path, "report", "cafe", "--ann", str(DEMO / "cafe" / "ann.json"),
               "--pred", str(DEMO / "cafe" / "pred_demo.json"), "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert "CAFE" in (out / "report.html").read_text(encoding="utf-8")
    assert (out / "summary.csv").read_text().startswith('"model","group"')


def test_install_desktop_points_the_entry_at_the_bundle(unpacked, tmp_path):
    run = _run(unpacked, tmp_path, "install-desktop")
    assert run.returncode == 0, run.stderr
    entry = (tmp_path / "data" / "applications" / "masklens.desktop").read_text()
    assert f"Exec={unpacked / 'masklens' / 'masklens'} gui %f" in entry.splitlines()


def test_within_the_size_target(unpacked):
    size = sum(p.stat().st_size for p in (unpacked / "masklens").rglob("*") if p.is_file() and not p.is_symlink())
    assert size <= MAX_BYTES, f"{size / 2**20:.0f} MB"
    shared = {p.relative_to(unpacked).as_posix() for p in (unpacked / "share").rglob("*") if p.is_file()}
    assert {"share/applications/masklens.desktop", "share/icons/hicolor/256x256/apps/masklens.png",
            "share/mime/packages/masklens-workspace.xml"} <= shared


def test_ctrl_c_at_any_moment_of_the_bundled_program(unpacked, tmp_path):
    """The bundle's `masklens` is the launcher (packaging/launcher.c) of PyInstaller's executable:
    SIGINT at every millisecond of its first 60 from the launcher's first instruction (its
    bootloader and interpreter starting included) ends as "masklens: interrupted", exit 130, or
    the command finished; never a traceback or a process killed by the signal."""
    import time

    seen: dict[str, int] = {}
    for ms in range(0, 60):
        p = subprocess.Popen([str(unpacked / "masklens" / "masklens"), "score", "cafe", "--demo"],
                             env=_environment(tmp_path), cwd=tmp_path, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        while p.poll() is None and not sigint_taken_over(p.pid):
            pass
        time.sleep(ms / 1000)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=300)
        assert (p.returncode, err.strip()) in {
            (130, "masklens: interrupted; finished work is kept, re-run to continue"), (0, "")}, (ms, p.returncode, err)
        seen[p.returncode] = seen.get(p.returncode, 0) + 1
    assert seen.get(130, 0) >= 20, seen
