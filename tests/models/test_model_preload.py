"""Loading a model must not freeze the window.

- the first import of torch and of a model's modules, and the weights' load, run with Python's
  cyclic garbage collector paused (a full collection walks every object with the GIL held: the
  window's thread waited 100-200 ms, several times per first load), and what they made is frozen
  after, out of later full collections;
- a session whose chosen model runs on torch imports torch while the window is built, not at the
  first prompt (its C libraries hold the GIL 0.3-0.4 s); a session on the demo model never does.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import pytest

from masklens.core.models import preload
from masklens.core.models.registry import create_segmenter

pytest.importorskip("torch")


def _run(code: str) -> dict:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_first_import_of_torch_runs_no_garbage_collection_and_freezes_what_it_made():
    result = _run(
        "import gc, json, sys\n"
        "collections = []\n"
        "gc.callbacks.append(lambda phase, info: collections.append(info['generation']) if phase == 'start' else None)\n"
        "import threading, masklens.core.runtime.gc_pause, masklens.core.runtime.extras\n"
        "from masklens.core.models.torch_device import import_torch\n"
        "before = len(collections)\n"
        "import_torch()\n"
        "during = len(collections) - before\n"
        "print(json.dumps({'during': during, 'enabled': gc.isenabled(),\n"
        "                  'frozen': gc.get_freeze_count(), 'torch': 'torch' in sys.modules}))\n"
    )
    assert result["torch"]
    assert result["during"] == 0  # the plain import runs dozens of collections
    assert result["enabled"]  # the collector is back on after
    assert result["frozen"] > 100_000  # torch's objects: out of later full collections


def test_the_weights_load_with_the_collector_paused(tiny_clipseg):
    seg = create_segmenter("clipseg", weights=str(tiny_clipseg), device="cpu")
    seen: list[bool] = []
    load = seg._load

    def recording_load() -> None:
        seen.append(gc.isenabled())
        load()

    seg._load = recording_load
    assert gc.isenabled()
    seg.ensure_loaded()
    assert seen == [False]
    assert gc.isenabled()


def test_which_backends_need_torch():
    assert not preload.needs_torch("demo")
    assert not preload.needs_torch("replay")
    assert not preload.needs_torch("no-such-model")
    for name in ("sam3", "grounded-sam2", "owlv2-sam2", "clipseg"):
        assert preload.needs_torch(name), name


_WINDOW = (
    "import json, sys\n"
    "from PySide6.QtWidgets import QApplication\n"
    "from masklens.gui.settings import Settings\n"
    "from masklens.gui.window.main_window import MainWindow\n"
    "app = QApplication([])\n"
    "w = MainWindow(Settings(model=sys.argv[1]), persist=False)\n"
    "started = w.torch_import is not None\n"
    "if started:\n"
    "    w.torch_import.join(120)\n"
    "apart = w.model_host.running and w.model_host.state.get('torch', False)\n"
    "w.model_host.stop()\n"
    "print(json.dumps({'started': started, 'torch here': 'torch' in sys.modules, 'torch apart': apart}))\n"
)


@pytest.mark.parametrize(("model", "mode", "expected"), [
    ("clipseg", "separate", {"started": True, "torch here": False, "torch apart": True}),
    ("clipseg", "in-process", {"started": True, "torch here": True, "torch apart": False}),
    ("demo", "separate", {"started": False, "torch here": False, "torch apart": False}),
])
def test_the_window_imports_torch_while_it_is_built_only_for_a_torch_model(model, mode, expected):
    """Built for a torch model, the window starts its model process and torch is imported there
    (or, with the models in the window's process, here in the background); for the demo, nowhere."""
    pytest.importorskip("PySide6")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "MASKLENS_MODEL_PROCESS": mode}
    out = subprocess.run([sys.executable, "-c", _WINDOW, model], capture_output=True, text=True,
                         env=env, timeout=300, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == expected


_PICK = (
    "import json, sys\n"
    "from PySide6.QtCore import Qt\n"
    "from PySide6.QtTest import QTest\n"
    "from PySide6.QtWidgets import QApplication\n"
    "from masklens.gui.settings import Settings\n"
    "from masklens.gui.window.main_window import MainWindow\n"
    "app = QApplication([])\n"
    "w = MainWindow(Settings(), persist=False)\n"
    "w.show()\n"
    "combo = w.prompt_bar.model\n"
    "combo.setFocus()\n"
    "picked = []\n"
    "while combo.currentData() != sys.argv[1] and len(picked) < combo.count():\n"
    "    QTest.keyClick(combo, Qt.Key.Key_Down)\n"
    "    picked.append((combo.currentData(), w.torch_import is not None))\n"
    "if w.torch_import is not None:\n"
    "    w.torch_import.join(120)\n"
    "apart = w.model_host.running and w.model_host.state.get('torch', False)\n"
    "w.model_host.stop()\n"
    "print(json.dumps({'picked': picked, 'torch': apart and 'torch' not in sys.modules}))\n"
)


def test_picking_a_torch_model_in_the_prompt_bar_starts_importing_torch():
    """Keys in the model picker: models without torch start nothing; the first torch model
    picked starts the model process, which imports torch (the window's process does not)."""
    pytest.importorskip("PySide6")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", _PICK, "sam3"], capture_output=True, text=True,
                         env=env, timeout=300, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["picked"][-1] == ["sam3", True]
    # nothing starts until the first torch model is picked; from then on the import is under way
    first = next(i for i, (name, _) in enumerate(result["picked"]) if preload.needs_torch(name))
    assert [started for _, started in result["picked"]] == [i >= first for i in range(len(result["picked"]))]
    assert result["torch"]
