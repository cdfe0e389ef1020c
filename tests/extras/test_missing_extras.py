"""Without an extra's libraries, every feature that needs them says which extra to install, in one
line and without a traceback; the core features keep working.

Absence is simulated in a subprocess by ``blocked_imports`` (``import torch`` fails there exactly as
when torch is not installed); tests/extras/test_core_install.py checks the same in a real venv that
has only the core dependencies.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DEMO = ROOT / "resources" / "demo"
EVERY_EXTRA = ["torch", "torchvision", "transformers", "safetensors", "huggingface_hub", "PySide6",
               "shiboken6", "superqt", "sam2", "hydra", "iopath", "ray"]


def run_blocked(blocked: list[str], code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter where ``blocked`` packages cannot be imported."""
    prelude = (f"import sys; sys.path.insert(0, {str(HERE)!r}); import blocked_imports; "
               f"blocked_imports.block({blocked!r})\n")
    env = {**os.environ, "MASKLENS_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1",
           "QT_QPA_PLATFORM": "offscreen", "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)


def cli_blocked(blocked: list[str], argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    code = f"from masklens.core.cli import main; sys.exit(main({argv!r}))"
    return run_blocked(blocked, code, tmp_path)


def test_the_blocker_makes_a_package_look_absent(tmp_path):
    out = run_blocked(["torch"], "import importlib.util\n"
                      "print(importlib.util.find_spec('torch'))\nimport torch", tmp_path)
    assert out.returncode == 1
    assert out.stdout.strip() == "None"
    assert "ModuleNotFoundError: No module named 'torch'" in out.stderr


CAFE = ["--ann", str(DEMO / "cafe/ann.json"), "--images", str(DEMO / "cafe/images")]

#: (command, what is missing, the extra the one line must name)
CASES = [
    (["models"], ["huggingface_hub"], "hub"),  # listing reads the hub cache: the 30 MB extra
    # the listing itself needs the hub only (a backend's own row then names [models])
    (["models", "sam3"], ["torch", "transformers", "huggingface_hub"], "hub"),
    (["gui", "--demo"], ["PySide6"], "gui"),
    (["gui", "--demo"], ["superqt"], "gui"),
    (["predict", "cafe", "--model", "sam3", *CAFE, "--out", "p.json"], ["torch"], "models"),
    (["predict", "cafe", "--model", "clipseg", *CAFE, "--out", "p.json"], ["transformers"], "models"),
    (["predict", "cafe", "--model", "grounded-sam2", *CAFE, "--out", "p.json"], ["huggingface_hub"],
     "models"),
    (["evaluate", "cafe", "--model", "owlv2-sam2", *CAFE, "--out", "runs"], ["torch"], "models"),
]


@pytest.mark.parametrize(("argv", "blocked", "extra"), CASES,
                         ids=[f"{c[0][0]}-{c[1][0]}" for c in CASES])
def test_command_without_its_extra_exits_2_with_one_line(argv, blocked, extra, tmp_path):
    out = cli_blocked(blocked, argv, tmp_path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("masklens: error: ")
    assert f"pip install 'masklens[{extra}]'" in lines[0]
    assert any(b in lines[0] for b in blocked)  # names the library that is missing
    assert "make setup" not in lines[0]
    assert not (tmp_path / "p.json").exists() and not (tmp_path / "runs").exists()


def test_original_sam2_checkpoint_without_sam2_is_a_model_error_naming_the_extra(tmp_path):
    ckpt = tmp_path / "sam2.1_hiera_large.pt"
    ckpt.write_bytes(b"not read: the package is checked first")
    code = (
        "from pathlib import Path\n"
        "from masklens.core.errors import ModelError\n"
        "from masklens.core.models.sam2_masks import make_box_masker\n"
        "from masklens.core.models.weights import ResolvedWeights\n"
        f"w = ResolvedWeights('x', Path({str(ckpt)!r}))\n"
        "try:\n"
        "    make_box_masker(w, None, None, 'grounded-sam2')\n"
        "except ModelError as exc:\n"
        "    print(exc)\n"
    )
    out = run_blocked(["sam2"], code, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (
        "grounded-sam2: the original SAM 2 checkpoint 'sam2.1_hiera_large.pt' needs sam2, which is "
        "not installed: pip install 'masklens[sam2]'")


def test_core_commands_work_with_every_extra_absent(tmp_path):
    """score (every demo kind), report, predict/evaluate with the demo model, review: the core
    install's features, with none of the extras' libraries importable."""
    code = (
        "import json\n"
        "from masklens.core.kinds.demo import demo_argv, demo_kinds\n"
        "from masklens.core.cli import main\n"
        "kinds = demo_kinds()\n"
        "for k in kinds:\n"
        "    assert main(['score', k, *demo_argv(k), '--out', f'{k}.json']) == 0, k\n"
        "assert main(['report', 'cafe', *demo_argv('cafe'), '--out', 'report']) == 0\n"
        "assert main(['predict', 'cafe', '--model', 'demo', *demo_argv('cafe', with_predictions=False),"
        " '--out', 'pred.json', '--quiet']) == 0\n"
        "assert main(['evaluate', 'r2sm', '--model', 'demo', *demo_argv('r2sm', with_predictions=False),"
        " '--out', 'runs', '--quiet']) == 0\n"
        f"extras = set({EVERY_EXTRA!r})\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} & extras)\n"
        "print(json.dumps({'kinds': kinds, 'imported': bad}))\n"
    )
    out = run_blocked(EVERY_EXTRA, code, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    info = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(info["kinds"]) == {"cafe", "pcs", "hallusegbench", "cgebench", "r2sm", "ovs"}
    assert info["imported"] == []
    for k in info["kinds"]:
        assert json.loads((tmp_path / f"{k}.json").read_text())["summary"]
    assert (tmp_path / "report" / "report.html").is_file()
    assert json.loads((tmp_path / "pred.json").read_text())  # the demo model's predictions


def test_the_window_lists_a_model_without_its_extra_as_unavailable_with_the_hint(tmp_path):
    code = (
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication([])\n"
        "from masklens.gui.prompts.prompt_bar import PromptBar\n"
        "from masklens.gui.dialogs.evaluate_dialog import _ModelRow\n"
        "from masklens.core.models.registry import backend_names\n"
        "bar, row = PromptBar(), _ModelRow(backend_names(), 'demo')\n"
        "for where, combo in (('prompt', bar.model), ('evaluate', row.model)):\n"
        "    for i in range(combo.count()):\n"
        "        item = combo.model().item(i)\n"
        "        print(where, combo.itemData(i), int(item.isEnabled()), combo.itemText(i), sep='\\t')\n"
    )
    out = run_blocked(["torch", "transformers"], code, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = {(where, name): (enabled == "1", label) for where, name, enabled, label
            in (line.split("\t") for line in out.stdout.strip().splitlines())}
    for where in ("prompt", "evaluate"):  # the prompt bar's model selector, Run benchmark's rows
        for name in ("sam3", "grounded-sam2", "owlv2-sam2", "clipseg"):
            enabled, label = rows[where, name]
            assert not enabled, label
            assert "not installed" in label and "pip install 'masklens[models]'" in label, label
        assert rows[where, "demo"][0] and "not installed" not in rows[where, "demo"][1]


def test_models_lists_a_backend_without_its_extra_as_not_installed(tmp_path):
    code = ("from masklens.core.models.inventory import inventory\n"
            "for e in inventory(): print(e.name, e.available, e.problem, sep='\\t')\n")
    out = run_blocked(["transformers"], code, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = {n: (a, p) for n, a, p in (line.split("\t") for line in out.stdout.strip().splitlines())}
    assert rows["sam3"] == ("False", "not installed (transformers): pip install 'masklens[models]'")
    assert rows["demo"] == ("True", "")
