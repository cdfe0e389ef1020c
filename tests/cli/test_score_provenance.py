"""`masklens score --out` records how the file was made, as the HTML report does: the masklens
version, each input's path, sha256 and (an hf:// input) its Hub revision, the parameters and the
time."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from masklens.core import __version__
from masklens.core.cli import main

ROOT = Path(__file__).resolve().parents[2]
D = ROOT / "resources" / "demo"
COMMIT = "89abcdef0123456789abcdef0123456789abcdef"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_score_out_carries_version_inputs_parameters_and_time(tmp_path):
    out = tmp_path / "scores.json"
    gts = [D / "pcs" / f"gold_annotator_{i}.json" for i in (1, 2, 3)]
    argv = ["score", "pcs", *[a for g in gts for a in ("--gt", str(g))], "--pred", str(D / "pcs/pred_demo.json"),
            "--score-threshold", "0.4", "--out", str(out)]
    before = datetime.now(UTC).replace(microsecond=0)
    assert main(argv) == 0
    prov = json.loads(out.read_text())["provenance"]
    assert prov["masklens_version"] == __version__ and prov["kind"] == "pcs"
    assert prov["params"] == {"score_threshold": 0.4}
    assert [r["path"] for r in prov["inputs"]["gt"]] == [str(g) for g in gts]
    assert [r["sha256"] for r in prov["inputs"]["gt"]] == [_sha(g) for g in gts]
    assert prov["inputs"]["pred"]["sha256"] == _sha(D / "pcs/pred_demo.json")
    made = datetime.fromisoformat(prov["created_utc"].replace("Z", "+00:00"))
    assert before <= made <= datetime.now(UTC)


def test_an_hf_input_records_its_hub_revision(tmp_path, monkeypatch):
    pytest.importorskip("huggingface_hub", reason="hf:// paths need the [hub] extra")
    repo = tmp_path / "hub" / "datasets--acme--demo"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    snap = repo / "snapshots" / COMMIT / "cafe"
    snap.mkdir(parents=True)
    (repo / "blobs").mkdir()
    blob = repo / "blobs" / _sha(D / "cafe/ann.json")
    shutil.copy(D / "cafe/ann.json", blob)
    (snap / "ann.json").symlink_to(Path("../../../blobs") / blob.name)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "scores.json"
    url = "hf://datasets/acme/demo/cafe/ann.json"
    assert main(["score", "cafe", "--ann", url, "--pred", str(D / "cafe/pred_demo.json"), "--out", str(out)]) == 0
    ann = json.loads(out.read_text())["provenance"]["inputs"]["ann"]
    assert ann == {"path": str(snap / "ann.json"), "sha256": _sha(D / "cafe/ann.json"), "hf": url, "revision": COMMIT}
