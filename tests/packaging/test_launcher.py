"""`make setup`'s launcher (packaging/launcher.py venv VENV): VENV/bin/masklens becomes the
launcher of pip's console script, moved to VENV/libexec/masklens; run again after pip rewrote
the script, the new script is the one run; without a C compiler, pip's script stays."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
