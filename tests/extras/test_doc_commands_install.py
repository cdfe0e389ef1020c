"""Every documented `masklens …` line (README.md, docs/*.md: tests/extras/doc_commands.py) run
literally in a fresh venv per extra, built from the wheel (tests/extras/venvs.py):

- the **core** venv runs every literal line that needs no extra, page by page from a copy of
  the repository's demo files (so a page's later line reads what an earlier one wrote), and
  every line that needs an extra — literal or a template whose words parse — exits 2 with the
  one-line ``pip install 'masklens[EXTRA]'`` hint;
- a **[hub]** venv (core + huggingface_hub only) runs the ``hf://`` lines offline
  (``HF_HUB_OFFLINE=1``) against a REAL Hugging Face cache laid out by huggingface_hub's own
  functions, ``OWNER/NAME`` standing for a repository of that cache holding the CAFE demo, and
  prints what the same line prints on the local files;
- a **[gui]** venv (PySide6-Essentials, superqt) runs every ``gui --screenshot`` line offscreen
  (each writes its PNG), starts the interactive ``gui`` lines (still up, without an error, after
  a few seconds) and runs ``install-desktop``.

``[models]`` (torch, transformers: several GB) gets no fresh venv here: CI would download
gigabytes per run. Its lines are checked in the core venv (the hint) and run in the full
development install by tests/models/. ``[ray]`` likewise (tests/models/test_ray_runner.py).

Time (measured on the 2-core development machine while other test runs kept its load average
at 6-10): this file adds about 210 s to the core-install test's 95 s — the [gui] venv 14 s and
its 8 screenshots, 3 windows and install-desktop 87 s, the core lines 56 s, the extra hints
26 s, the [hub] venv 12 s and its line 12 s; the venvs share the core venv's packages through
a ``.pth`` file (tests/extras/venvs.py), so only the extra's own packages are unpacked.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from doc_commands import ROOT, DocCommand, documented_commands
from hub_layout import lay_out
from venvs import checked, pip, run

pytestmark = pytest.mark.slow

COMMANDS = documented_commands()
LITERAL = [c for c in COMMANDS if c.literal]


def _parses(c: DocCommand) -> bool:
    """The line's words parse and name a real command and kind (placeholders only as values)."""
    try:
        words = c.words
    except ValueError:
        return False
    positional = [w for i, w in enumerate(words) if not w.startswith("-") and not words[i - 1].startswith("--")]
    return not any("…" in w or w[:1] in "<$" for w in words) and not any(w.isupper() for w in positional)


def _env(bin_dir: Path, home: Path, **extra: str) -> dict[str, str]:
    """The user's environment: the venv's `masklens` first on PATH, a private home, no
    PYTHONPATH (the installed wheel is what runs, never the checkout)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", HOME=str(home),
               XDG_DATA_HOME=str(home / ".local" / "share"), XDG_CONFIG_HOME=str(home / ".config"),
               MASKLENS_CACHE_DIR=str(home / "cache"), MASKLENS_CONFIG_DIR=str(home / "config"),
               MASKLENS_LOG_DIR=str(home / "logs"), HF_HUB_OFFLINE="1", MPLBACKEND="Agg",
               QT_QPA_PLATFORM="offscreen", **extra)
    return env


def _workspace(tmp: Path) -> Path:
    """The repository root as a user has it, for reading: the demo files and docs/images/."""
    shutil.copytree(ROOT / "resources" / "demo", tmp / "resources" / "demo")
    (tmp / "docs" / "images").mkdir(parents=True)
    (tmp / "home").mkdir()
    return tmp


def _run_line(c: DocCommand, cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    if c.redirect is not None:  # a shell line: the user's shell does the redirection
        target = Path(c.redirect.replace("~", env["HOME"], 1))
        target.parent.mkdir(parents=True, exist_ok=True)
        return run(["bash", "-c", c.command], cwd=cwd, env=env, timeout=timeout)
    return run(["masklens", *c.argv], cwd=cwd, env=env, timeout=timeout)


def test_the_documented_lines_are_found_and_classified():
    pages = {c.page for c in COMMANDS}
    assert {"README.md", "docs/demo.md", "docs/gui.md", "docs/models.md", "docs/scale.md"} <= pages
    core = [c for c in LITERAL if c.extra is None]
    assert len(core) >= 10 and len([c for c in LITERAL if c.extra == "gui"]) >= 8
    assert any(c.extra == "hub" for c in LITERAL) and any(c.extra == "models" for c in COMMANDS)
    assert next(c for c in COMMANDS if c.argv[:1] == ["models"]).extra == "hub"  # listing: the hub only
    # a page's line that reads an earlier line's output is literal (docs/models.md: predict, then score)
    assert any("cafe_pred.json" in c.command and c.argv[0] == "score" for c in core)


def test_core_venv_runs_every_literal_core_line(core_venv, tmp_path):
    failures = []
    for page in dict.fromkeys(c.page for c in LITERAL):
        ws = _workspace(tmp_path / page.replace("/", "_"))
        env = _env(core_venv, ws / "home")
        for c in (c for c in LITERAL if c.page == page and c.extra is None):
            out = _run_line(c, ws, env)
            if out.returncode != 0 or "Traceback" in out.stderr:
                failures.append(f"{c}\n  rc={out.returncode}: {out.stderr.strip()[-800:]}")
    assert not failures, "\n".join(failures)
    completion = tmp_path / "README.md" / "home" / ".local/share/bash-completion/completions/masklens"
    assert "complete" in completion.read_text()  # the README's redirected line wrote the script


@pytest.mark.parametrize("extra", ["models", "gui", "hub"])
def test_core_venv_names_the_extra_a_line_needs_in_one_line(core_venv, tmp_path, extra):
    lines = [c for c in COMMANDS if c.extra == extra and _parses(c) and not c.interactive]
    if extra == "gui":  # eleven `gui …` lines fail alike before any option is read: one per command
        lines = list({c.argv[0]: c for c in lines}.values())
    assert lines
    ws = _workspace(tmp_path)
    env = _env(core_venv, ws / "home")
    for c in lines:
        out = run(["masklens", *c.argv], cwd=ws, env=env, timeout=120)
        err = out.stderr.strip()
        assert out.returncode == 2 and len(err.splitlines()) == 1, f"{c}\n{err}"
        assert f"pip install 'masklens[{extra}]'" in err, f"{c}\n{err}"


def _lay_out_cache(cache: Path, repo_id: str, files: dict[str, Path]) -> None:
    """``files`` as dataset ``repo_id`` at ``main``, exactly as huggingface_hub's downloads lay
    them out (blobs named by sha256, snapshot symlinks, refs/main)."""
    from huggingface_hub import file_download

    commit = "c" * 40
    storage = lay_out(cache, repo_id, "dataset", commit, files)
    file_download._cache_commit_hash_for_specific_revision(str(storage), "main", commit)


def test_hub_venv_runs_the_hub_lines_offline_on_a_real_cache(hub_venv, tmp_path):
    pytest.importorskip("huggingface_hub")
    listed = checked([*pip(hub_venv), "list", "--format=freeze"]).stdout.lower().replace("_", "-")
    assert "huggingface-hub==" in listed
    assert "torch==" not in listed and "pyside6" not in listed
    ws = _workspace(tmp_path)
    demo = ws / "resources" / "demo" / "cafe"
    _lay_out_cache(ws / "hub", "acme/cafe", {"ann.json": demo / "ann.json", "pred.json": demo / "pred_demo.json"})
    shutil.copy2(demo / "pred_demo.json", ws / "pred.json")  # the line's own local prediction file
    env = _env(hub_venv, ws / "home", HF_HUB_CACHE=str(ws / "hub"))
    lines = [c for c in COMMANDS if c.extra == "hub"]
    assert lines
    for c in lines:
        argv = [w.replace("OWNER/NAME", "acme/cafe") for w in c.argv]
        out = run(["masklens", *argv], cwd=ws, env=env, timeout=300)
        assert out.returncode == 0 and "Traceback" not in out.stderr, f"{c}\n{out.stderr[-1500:]}"
        local = [w.replace("hf://datasets/OWNER/NAME/", "resources/demo/cafe/") for w in c.argv]
        same = run(["masklens", *local], cwd=ws, env=env, timeout=300)
        assert same.returncode == 0 and out.stdout == same.stdout and out.stdout.strip(), c


def _png(path: Path) -> bool:
    return path.is_file() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 1000


def test_gui_venv_runs_the_gui_lines_offscreen(gui_venv, tmp_path):
    listed = checked([*pip(gui_venv), "list", "--format=freeze"]).stdout.lower().replace("_", "-")
    assert "pyside6-essentials==" in listed and "superqt==" in listed and "torch==" not in listed
    ws = _workspace(tmp_path)
    env = _env(gui_venv, ws / "home")
    lines = [c for c in LITERAL if c.extra == "gui"]
    failures = _still_up([c for c in lines if c.interactive], ws, env)

    def one(c: DocCommand) -> list[str]:
        out = _run_line(c, ws, env)
        if out.returncode != 0 or "Traceback" in out.stderr:
            return [f"{c}\n  rc={out.returncode}: {out.stderr.strip()[-800:]}"]
        shot = c.argv[c.argv.index("--screenshot") + 1] if "--screenshot" in c.argv else None
        return [f"{c}\n  no screenshot at {shot}"] if shot is not None and not _png(ws / shot) else []

    with ThreadPoolExecutor(2) as pool:  # two windows at a time (each its own process)
        for found in pool.map(one, [c for c in lines if not c.interactive]):
            failures += found
    assert not failures, "\n".join(failures)
    desktop = list((ws / "home" / ".local" / "share" / "applications").glob("*.desktop"))
    assert desktop and "Exec=" in desktop[0].read_text()  # install-desktop's menu entry


def _still_up(lines: list[DocCommand], cwd: Path, env: dict[str, str], seconds: float = 8.0) -> list[str]:
    """Interactive lines, started together: each window process is still running after
    ``seconds`` with nothing on stderr that says it failed; then each is closed (SIGTERM to its
    process group)."""
    started = []
    for i, c in enumerate(lines):
        err = open(cwd / f"gui-stderr-{i}.txt", "w")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(["masklens", *c.argv], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                                stderr=err, start_new_session=True)
        started.append((c, proc, err))
    time.sleep(seconds)
    failures = []
    for c, proc, err in started:
        code = proc.poll()
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        err.close()
        text = Path(err.name).read_text()
        if code not in (None, 0) or "Traceback" in text or "error" in text.lower():
            failures.append(f"{c}\n  exited {code} within {seconds} s: {text.strip()[-800:]}")
    return failures


def test_the_documented_lines_quote_as_the_shell_reads_them():
    """What is run is the documented line itself (shlex, as the shell splits it)."""
    for c in LITERAL:
        assert shlex.join(["masklens", *c.argv]).startswith("masklens"), c
