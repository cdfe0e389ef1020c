"""`masklens models`: every backend, where its weights come from, present or not (offline, real files)."""

from __future__ import annotations

import json

import pytest

from masklens.core.cli import main
from masklens.core.models.inventory import hf_cache_dir, inventory, locate


def fake_hub_repo(cache, repo_id: str, files: dict[str, bytes]) -> None:
    """A Hugging Face hub cache entry laid out as huggingface_hub writes it."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True)
    for name, data in files.items():
        (snap / name).write_bytes(data)


@pytest.fixture
def hub(tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


def test_hub_ids_are_looked_up_in_the_local_cache(hub):
    assert hf_cache_dir() == hub
    c = locate("facebook/sam3")
    assert not c.present and c.status == "missing" and "hf download facebook/sam3" in c.hint
    assert c.location == str(hub / "models--facebook--sam3")
    fake_hub_repo(hub, "facebook/sam3", {"config.json": b"{}"})
    c = locate("facebook/sam3")
    assert not c.present and c.status.startswith("partial")
    fake_hub_repo(hub, "org/full", {"config.json": b"{}", "model.safetensors": b"x"})
    c = locate("org/full")
    assert c.present and c.location.endswith("0123456789abcdef0123456789abcdef01234567")


def test_local_paths(tmp_path):
    assert not locate(str(tmp_path / "nowhere")).present
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    assert locate(str(folder)).status.startswith("partial")
    (folder / "model.safetensors").write_bytes(b"x")
    assert locate(str(folder)).present


def test_inventory_lists_every_registered_backend(hub):
    entries = {e.name: e for e in inventory()}
    assert {"demo", "replay", "sam3"} <= set(entries)
    assert entries["demo"].ready and entries["demo"].checkpoints == []
    sam3 = entries["sam3"]
    assert sam3.available and not sam3.ready and sam3.checkpoints[0].spec == "facebook/sam3"
    fake_hub_repo(hub, "facebook/sam3", {"config.json": b"{}", "model.safetensors": b"x"})
    assert {e.name: e for e in inventory(["sam3"])}["sam3"].ready
    if "grounded-sam2" in entries and entries["grounded-sam2"].available:
        roles = [c.role for c in entries["grounded-sam2"].checkpoints]
        assert len(roles) >= 2  # the detector and the SAM 2 stage


def test_cli_text_and_json(hub, capsys, tmp_path):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert str(hub) in out and "facebook/sam3" in out and "hf download" in out
    assert "demo" in out and "no weights needed" in out
    assert main(["models", "sam3", "--weights", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (sam3,) = data["backends"]
    assert sam3["checkpoints"][0]["location"] == str(tmp_path) and sam3["ready"] is False


def test_cli_errors(hub, capsys):
    assert main(["models", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown model 'nope'" in err and "Traceback" not in err
    assert main(["models", "--weights", "x"]) == 2
    assert "exactly one" in capsys.readouterr().err
