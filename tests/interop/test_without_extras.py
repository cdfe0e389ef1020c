"""export, cache and completion are core features: they work with every extra's libraries absent
(simulated with tests/extras/blocked_imports.py in a fresh interpreter). install-desktop is not:
its entry starts the window, so without [gui] it refuses (tests/cli/test_desktop_entry_spec.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
D = ROOT / "resources" / "demo"
EXTRAS = ["torch", "torchvision", "transformers", "safetensors", "huggingface_hub", "PySide6",
          "shiboken6", "superqt", "sam2", "hydra", "iopath", "ray"]


@pytest.mark.parametrize("argv", [
    ["export", "cafe", "--ann", str(D / "cafe/ann.json"), "--pred", str(D / "cafe/pred_demo.json"),
     "--images", str(D / "cafe/images"), "--to", "coco", "--out", "coco"],
    ["export", "pcs", "--gt", str(D / "pcs/gold_annotator_1.json"), "--pred", str(D / "pcs/pred_demo.json"),
     "--to", "fiftyone", "--out", "fo"],
    ["export", "r2sm", "--ann", str(D / "r2sm/ann.json"), "--pred", str(D / "r2sm/pred_demo.json"),
     "--to", "csv", "--out", "csv"],
    ["cache", "info"],
    ["completion", "zsh"],
], ids=lambda a: " ".join(a[:2]) if a[0] == "export" else a[0])
def test_core_commands_need_no_extra(argv, tmp_path):
    code = (f"import sys; sys.path.insert(0, {str(ROOT / 'tests' / 'extras')!r}); import blocked_imports; "
            f"blocked_imports.block({EXTRAS!r}); from masklens.core.cli import main; sys.exit(main({argv!r}))")
    env = {**os.environ, "MASKLENS_CACHE_DIR": str(tmp_path / "cache"), "XDG_DATA_HOME": str(tmp_path / "share"),
           "MASKLENS_LOG_DIR": str(tmp_path / "logs"), "MPLBACKEND": "Agg"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    if argv[0] == "export":
        assert (tmp_path / argv[-1] / "masklens-export.json").is_file()
