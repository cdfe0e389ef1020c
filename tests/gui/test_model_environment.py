"""The window's torch models run in a Python environment the user points to (Evaluate › Model
environment…, or MASKLENS_MODEL_PYTHON): what a masklens without torch — the desktop bundle —
needs. Here the dev environment's own Python is that environment, and a tiny random CLIPSeg
answers a prompt typed and run in the window from a process started with that interpreter."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

pytest.importorskip("transformers")
pytestmark = pytest.mark.slow  # a real model process in another interpreter behind the window
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))

import tiny  # noqa: E402

from masklens.gui.window import model_environment  # noqa: E402

PYTHON = Path(sys.executable)  # the dev venv's python: an environment with masklens[models]


@pytest.fixture(scope="module")
def clipseg(tmp_path_factory):
    return tiny.build_clipseg(tmp_path_factory.mktemp("clipseg"))


def _prompt(w, qtbot, clipseg, text: str) -> None:
    w.commands.set_model_options("clipseg", {"weights": str(clipseg), "device": "cpu"})
    pb = w.prompt_bar
    pb.set_role("positive", None)
    pb.set_text(text)
    assert pb.select_model("clipseg")
    qtbot.mouseClick(pb.run, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=180000)


def _command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


def test_the_model_environment_chosen_in_the_window_runs_the_prompt(toy_window, qtbot, clipseg, monkeypatch,
                                                                    no_internal_errors):
    monkeypatch.setenv("MASKLENS_MODEL_PROCESS", "separate")
    w = toy_window
    assert "Model &environment…" in [a.text() for a in w.menuBar().actions()[2].menu().actions()]
    assert model_environment.set_model_environment(w, PYTHON)
    assert w.settings.model_python == str(PYTHON)
    _prompt(w, qtbot, clipseg, "red square")
    assert len(w.state.live) == 1, w.message_bar.text
    pid = w.model_host.pid
    assert pid not in (None, os.getpid())
    assert _command_line(pid)[:3] == [str(PYTHON), "-m", "masklens.core.models.model_process"]


def test_masklens_model_python_picks_the_environment(window, toy, qtbot, clipseg, monkeypatch):
    monkeypatch.setenv("MASKLENS_MODEL_PROCESS", "separate")
    monkeypatch.setenv("MASKLENS_MODEL_PYTHON", str(PYTHON))
    w = window
    assert w.model_host.python is None  # nothing chosen in the window: the setting decides
    assert w.commands.open_benchmark("toy", ["--ann", str(toy["ann"]), "--pred", str(toy["pred"])])
    qtbot.waitUntil(lambda: bool(w.state.readouts), timeout=10000)
    _prompt(w, qtbot, clipseg, "blue circle")
    assert len(w.state.live) == 1, w.message_bar.text
    assert _command_line(w.model_host.pid)[1:3] == ["-m", "masklens.core.models.model_process"]


def test_an_environment_that_is_no_program_is_refused(window, tmp_path):
    assert not model_environment.set_model_environment(window, tmp_path / "no-python")
    assert "is not an executable file" in window.message_bar.text


def test_without_torch_here_the_torch_backends_are_offered_in_the_model_environment(tmp_path):
    """An install without torch (the bundle): the prompt bar greys the torch backends out, and
    offers them once a model environment runs them."""
    import json
    import subprocess

    extras = Path(__file__).resolve().parents[1] / "extras"
    code = (f"import sys; sys.path.insert(0, {str(extras)!r}); import blocked_imports; "
            "blocked_imports.block(['torch', 'torchvision', 'transformers']); import json\n"
            "from masklens.gui.prompts.prompt_bar import model_availability\n"
            "print(json.dumps([model_availability(), model_availability(elsewhere=True)]))")
    env = {**os.environ, "MASKLENS_CACHE_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    here, elsewhere = ({name: (label, usable) for name, label, usable, _ in rows}
                       for rows in json.loads(out.stdout))
    assert here["clipseg"][1] is False and "not installed" in here["clipseg"][0]
    label, usable = elsewhere["clipseg"]
    assert usable and label.endswith("— in the model environment")
    assert here["demo"][1] and elsewhere["demo"][1]
