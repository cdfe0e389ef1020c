"""`make setup`'s launcher (packaging/launcher.py venv VENV): VENV/bin/masklens becomes the
launcher of pip's console script, moved to VENV/libexec/masklens; run again after pip rewrote
the script, the new script is the one run; without a C compiler, pip's script stays."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from file_states import snapshot

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "packaging" / "launcher.py"


def _pip_script(venv: Path, says: str) -> Path:
    """VENV/bin/masklens as pip writes it, printing ``says`` before masklens runs."""
    script = venv / "bin" / "masklens"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f"#!{sys.executable}\nimport sys\nprint({says!r})\nfrom masklens.core.cli import main\n"
                      "if __name__ == '__main__':\n    sys.exit(main())\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def _setup(venv: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "venv", str(venv)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **env})


def _is_program(path: Path) -> bool:
    return path.read_bytes()[:4] == b"\x7fELF"


def test_setup_puts_the_launcher_in_front_of_pips_script_again_after_each_pip_install(tmp_path):
    if shutil.which((os.environ.get("CC") or "cc").split()[0]) is None:
        pytest.skip("no C compiler (cc) to build the launcher with")
    venv = tmp_path / "venv"
    entry = _pip_script(venv, "first")
    for _ in range(2):  # a second run with nothing new keeps everything in place
        assert _setup(venv).returncode == 0
        assert _is_program(entry)
        run = subprocess.run([str(entry), "--version"], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0 and run.stdout.splitlines()[0] == "first", run.stderr
    _pip_script(venv, "second")  # pip install again (a pyproject change): a new script
    assert _setup(venv).returncode == 0
    assert _is_program(entry)
    assert "second" in (venv / "libexec" / "masklens").read_text(encoding="utf-8")
    run = subprocess.run([str(entry), "--version"], capture_output=True, text=True, timeout=120)
    assert run.stdout.splitlines()[0] == "second", run.stderr
    assert sorted(p.name for p in (venv / "bin").iterdir()) == ["masklens"]  # nothing left behind


def test_without_a_c_compiler_pips_script_stays(tmp_path):
    venv = tmp_path / "venv"
    entry = _pip_script(venv, "pip's")
    before = entry.read_bytes()
    run = _setup(venv, CC=str(tmp_path / "no-such-cc"))
    assert run.returncode == 0
    assert len(run.stderr.splitlines()) == 1 and "no C compiler" in run.stderr
    assert entry.read_bytes() == before and not (venv / "libexec").exists()


def _private_node(path: Path) -> None:
    try:
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers, private to the test
    except PermissionError:
        pytest.skip("mknod needs privileges here")


@pytest.mark.parametrize("what", ["user-file", "user-folder", "device-node", "symlink"])
def test_build_never_replaces_what_it_did_not_write(tmp_path, what):
    """`launcher.py build OUT`: OUT a user's file or folder, a private device node or a symlink
    is refused in one line (exit 2) before anything is compiled, and stays as it was."""
    mine = tmp_path / "mine"
    mine.mkdir()
    out = mine / "masklens"
    if what == "user-file":
        out.write_text("my thesis")
    elif what == "user-folder":
        out.mkdir()
        (out / "notes.txt").write_text("precious")
    elif what == "device-node":
        _private_node(out)
    else:
        (mine / "elsewhere.txt").write_text("precious")
        out.symlink_to(mine / "elsewhere.txt")
    before = snapshot(mine)
    run = subprocess.run([sys.executable, str(SCRIPT), "build", str(out), "masklens-bin"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert len(run.stderr.splitlines()) == 1 and "nothing was changed" in run.stderr and "Traceback" not in run.stderr
    assert snapshot(mine) == before


@pytest.mark.parametrize("what", ["entry-user-file", "entry-folder", "entry-device-node", "libexec-user-file",
                                  "libexec-device-node", "libexec-a-file"])
def test_venv_never_replaces_what_pip_or_it_did_not_write(tmp_path, what):
    """`launcher.py venv VENV`: VENV/bin/masklens must be pip's script or the launcher, and where
    pip's script goes (VENV/libexec/masklens) nothing or a script moved there before; a user's
    file or folder or a private device node there is refused in one line and stays as it was."""
    venv = tmp_path / "venv"
    entry = _pip_script(venv, "pip's")
    libexec = venv / "libexec"
    if what == "entry-user-file":
        entry.write_text("#!/bin/sh\necho my own tool\n")
    elif what == "entry-folder":
        entry.unlink()
        entry.mkdir()
        (entry / "notes.txt").write_text("precious")
    elif what == "entry-device-node":
        entry.unlink()
        _private_node(entry)
    elif what == "libexec-user-file":
        libexec.mkdir()
        (libexec / "masklens").write_text("my own masklens notes")
    elif what == "libexec-device-node":
        libexec.mkdir()
        _private_node(libexec / "masklens")
    else:
        libexec.write_text("a file where the folder would go")
    before = snapshot(venv)
    run = _setup(venv)
    assert run.returncode == 2, run.stderr
    assert len(run.stderr.splitlines()) == 1 and "Traceback" not in run.stderr, run.stderr
    assert snapshot(venv) == before
