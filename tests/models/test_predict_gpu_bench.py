"""The GPU benchmark script: says so and exits 0 without CUDA; its measuring code runs on the CPU."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_models.py"


def _load():
    spec = importlib.util.spec_from_file_location("gpu_models", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_without_cuda_it_says_so_and_exits_0(capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():  # pragma: no cover - no GPU in CI
        pytest.skip("this machine has CUDA")
    assert _load().main([]) == 0
    out = capsys.readouterr().out
    assert "no CUDA device" in out and "Nothing was measured" in out


def test_cpu_mode_measures_and_reports(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MASKLENS_BENCH_WEIGHTS_SAM3", raising=False)
    out = tmp_path / "rows.json"
    rc = _load().main(["--device", "cpu", "--backends", "demo,sam3,nope", "--size", "160",
                       "--prompts", "3", "--weights", f"sam3={tmp_path / 'absent'}", "--out", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "NOT GPU numbers" in text
    rows = {r["backend"]: r for r in json.loads(out.read_text())["rows"]}
    demo = rows["demo"]
    assert demo["status"] == "ok" and demo["size"] == 160
    assert len(demo["further_cold_ms"]) == 2 and demo["first_prompt_warm_ms"] > 0
    assert rows["sam3"]["status"].startswith("skipped:") and "absent" in rows["sam3"]["status"]
    assert rows["nope"]["status"].startswith("skipped:") and "unknown model" in rows["nope"]["status"]
