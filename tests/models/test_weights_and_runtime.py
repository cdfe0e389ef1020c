"""Checkpoint resolution, hashing, safe loading, device/dtype choice and image intake."""

from __future__ import annotations

import hashlib
import os
import shutil

import numpy as np
import pytest

from masklens.core.errors import ModelError
from masklens.core.models.base import SegmentRequest
from masklens.core.models.registry import create_segmenter
from masklens.core.models.torch_device import Runtime, resolve_device, resolve_dtype
from masklens.core.models.torch_runtime import as_rgb_image
from masklens.core.models.weights import (
    checkpoint_hash,
    pretrained_kwargs,
    require_hf_folder,
    resolve_weights,
    safe_torch_load,
)


class _RunsCode:
    """Unpickling this would run a shell command (it must never happen)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _evil_checkpoint(path, marker) -> None:
    import torch

    torch.save({"model": {"w": torch.zeros(2)}, "extra": _RunsCode(str(marker))}, path)


# ------------------------------------------------------------------ resolution
def test_local_folder_and_file(tmp_path):
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"x")
    resolved = resolve_weights(str(folder), backend="sam3")
    assert resolved.path == folder.resolve() and resolved.hub_id is None and resolved.is_dir
    assert require_hf_folder(resolved, backend="sam3") == folder.resolve()
    file = tmp_path / "model.pt"
    file.write_bytes(b"abc")
    assert resolve_weights(file, backend="grounded-sam2").path == file.resolve()


def test_missing_and_empty_and_incomplete(tmp_path):
    with pytest.raises(ModelError) as err:
        resolve_weights(str(tmp_path / "nothing" / "here"), backend="sam3")
    assert "nothing/here" in str(err.value) and "not found" in str(err.value) and "hint" in str(err.value)
    with pytest.raises(ModelError, match="not found"):
        resolve_weights("./weights/sam3.pt", backend="sam3")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelError, match="empty"):
        resolve_weights(str(empty), backend="sam3")
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "model.safetensors").write_bytes(b"x")
    with pytest.raises(ModelError, match="no config.json"):
        require_hf_folder(resolve_weights(str(partial), backend="sam3"), backend="sam3")
    noweights = tmp_path / "noweights"
    noweights.mkdir()
    (noweights / "config.json").write_text("{}")
    with pytest.raises(ModelError, match="no weights"):
        require_hf_folder(resolve_weights(str(noweights), backend="sam3"), backend="sam3")


def test_hub_id_offline(monkeypatch, tmp_path):
    import huggingface_hub.constants as hc

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(ModelError) as err:
        resolve_weights("acme/tiny-seg", backend="sam3")
    text = str(err.value)
    assert "acme/tiny-seg" in text and "offline" in text
    assert "hf download acme/tiny-seg" in text and "HF_HOME" in text
    # the same id, present in the cache, resolves offline to its snapshot folder
    repo = tmp_path / "models--acme--tiny-seg"
    snap = repo / "snapshots" / ("a" * 40)
    snap.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    (snap / "config.json").write_text("{}")
    (snap / "model.safetensors").write_bytes(b"weights")
    resolved = resolve_weights("acme/tiny-seg", backend="sam3")
    assert resolved.hub_id == "acme/tiny-seg" and resolved.path == snap
    assert len(resolved.sha256) == 64


def test_paths_and_hub_ids_told_apart():
    from masklens.core.models.weights import looks_like_path

    for path in ("/abs/dir", "./rel", "../up", "~/w", "a/b/c", "sam2.1_hiera_large.pt", "cfg.yaml", "C:\\w"):
        assert looks_like_path(path), path
    for hub_id in ("facebook/sam3", "IDEA-Research/grounding-dino-base", "CIDAS/clipseg-rd64-refined"):
        assert not looks_like_path(hub_id), hub_id


def test_not_a_hub_id(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        resolve_weights("not a model id", backend="clipseg")


# ------------------------------------------------------------------ hashing
def test_checkpoint_hash_is_content_based(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        folder.mkdir()
        (folder / "config.json").write_text('{"x": 1}')
        (folder / "model.safetensors").write_bytes(b"\x00" * 100)
    assert checkpoint_hash(a) == checkpoint_hash(b)  # same content, different place
    (b / "model.safetensors").write_bytes(b"\x01" * 100)
    assert checkpoint_hash(a) != checkpoint_hash(b)
    file = a / "model.safetensors"
    assert checkpoint_hash(file) == hashlib.sha256(b"\x00" * 100).hexdigest()


def test_hub_blob_name_is_used_without_rereading(tmp_path):
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    digest = hashlib.sha256(b"big weights").hexdigest()
    (blobs / digest).write_bytes(b"big weights")
    snap = tmp_path / "snapshots" / "rev"
    snap.mkdir(parents=True)
    (snap / "model.safetensors").symlink_to(blobs / digest)
    assert checkpoint_hash(snap / "model.safetensors") == digest


# ------------------------------------------------------------------ safe loading
def test_pickle_with_code_is_refused(tmp_path):
    marker = tmp_path / "code-ran"
    evil = tmp_path / "sam2_hiera_large.pt"
    _evil_checkpoint(evil, marker)
    with pytest.raises(ModelError) as err:
        safe_torch_load(evil, backend="grounded-sam2")
    assert "refusing" in str(err.value) and str(evil) in str(err.value)
    assert not marker.exists()


def test_pickle_with_code_refused_through_the_backend(tmp_path, tiny_grounding_dino, rgb_image):
    marker = tmp_path / "code-ran"
    evil = tmp_path / "sam2.1_hiera_tiny.pt"
    _evil_checkpoint(evil, marker)
    seg = create_segmenter(
        "grounded-sam2", weights=str(tiny_grounding_dino), sam2_weights=str(evil), device="cpu"
    )
    with pytest.raises(ModelError, match="refusing"):
        seg.segment(rgb_image, SegmentRequest("cat"))
    assert not marker.exists()


def test_transformers_bin_with_code_is_refused(tmp_path, tiny_clipseg, rgb_image):
    """A folder whose only weights are a pickle with code: transformers' weights_only load refuses."""
    marker = tmp_path / "code-ran"
    folder = tmp_path / "clipseg-bin"
    shutil.copytree(tiny_clipseg, folder)
    (folder / "model.safetensors").unlink()
    _evil_checkpoint(folder / "pytorch_model.bin", marker)
    assert "use_safetensors" not in pretrained_kwargs(folder)
    assert pretrained_kwargs(folder)["trust_remote_code"] is False
    seg = create_segmenter("clipseg", weights=str(folder), device="cpu")
    with pytest.raises(ModelError) as err:
        seg.segment(rgb_image, SegmentRequest("cat"))
    assert str(folder) in str(err.value)
    assert not marker.exists()


def test_safetensors_required_when_present(tiny_clipseg):
    kwargs = pretrained_kwargs(tiny_clipseg)
    assert kwargs == {"trust_remote_code": False, "use_safetensors": True}


# ------------------------------------------------------------------ device / dtype
def test_device_choice():
    import torch

    assert resolve_device("cpu") == "cpu"
    expected = "cuda" if torch.cuda.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu")
    assert resolve_device("auto") == expected
    with pytest.raises(ModelError, match="unknown device"):
        resolve_device("tpu")
    assert resolve_dtype("cpu", "auto") == "float32"
    with pytest.raises(ModelError, match="unknown dtype"):
        resolve_dtype("cpu", "int8")
    assert Runtime.create("cpu").dtype == "float32"


@pytest.mark.skipif("__import__('torch').cuda.is_available()", reason="this machine has CUDA")
def test_cuda_requested_without_cuda():
    with pytest.raises(ModelError) as err:  # a local path: in offline mode a hub id absent from
        create_segmenter("sam3", weights="/models/sam3", device="cuda")  # the cache fails first
    text = str(err.value)
    assert "CUDA is not available" in text and "--device cpu" in text


def test_unknown_model_name():
    with pytest.raises(ModelError) as err:
        create_segmenter("sam4")
    assert "sam4" in str(err.value) and "sam3" in str(err.value)


# ------------------------------------------------------------------ images
def test_undecodable_image(tmp_path, tiny_clipseg):
    bad = tmp_path / "broken.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\nnot really a png")
    with pytest.raises(ModelError) as err:
        as_rgb_image(bad)
    assert str(bad) in str(err.value) and "cannot be decoded" in str(err.value)
    seg = create_segmenter("clipseg", weights=str(tiny_clipseg), device="cpu")
    with pytest.raises(ModelError, match="cannot be decoded"):
        seg.segment(bad, SegmentRequest("cat"))
    with pytest.raises(ModelError, match="not found"):
        as_rgb_image(tmp_path / "missing.jpg")


def test_image_arrays(tmp_path):
    gray = np.arange(12, dtype=np.uint8).reshape(3, 4)
    assert as_rgb_image(gray).shape == (3, 4, 3)
    rgba = np.zeros((3, 4, 4), np.uint8)
    assert as_rgb_image(rgba).shape == (3, 4, 3)
    unit = np.full((2, 2, 3), 0.5, np.float32)
    assert as_rgb_image(unit)[0, 0, 0] == 127
    with pytest.raises(ModelError, match="shape"):
        as_rgb_image(np.zeros((3, 4, 2), np.uint8))
    from PIL import Image

    path = tmp_path / "ok.png"
    Image.fromarray(np.full((5, 6, 3), 200, np.uint8)).save(path)
    assert as_rgb_image(path).shape == (5, 6, 3)


def test_offline_and_absent_fails_at_creation_before_torch_is_imported(tmp_path):
    """In offline mode a backend whose hub weights are not in the cache fails when it is created —
    before torch/transformers are imported (seconds), let alone a hub time-out."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from masklens.core.errors import ModelError\n"
        "from masklens.core.models.registry import create_segmenter\n"
        "try:\n"
        "    create_segmenter(sys.argv[1], device='cpu')\n"
        "except ModelError as exc:\n"
        "    print(json.dumps([str(exc), exc.format(window=True),\n"
        "                      sorted(m for m in ('torch', 'transformers') if m in sys.modules)]))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path)}
    for name, hub_id in (("sam3", "facebook/sam3"), ("grounded-sam2", "IDEA-Research/grounding-dino-base")):
        out = subprocess.run([sys.executable, "-c", code, name], capture_output=True, text=True, env=env,
                             check=True)
        cli, window, imported = json.loads(out.stdout)
        assert imported == [], name  # it failed before the heavy imports: no waiting on them
        assert f"'{hub_id}' are not in the Hugging Face cache and offline mode is on" in cli
        assert f"hf download {hub_id}" in cli and "--weights" in cli
        assert ("hf auth login" in cli) == (name == "sam3")  # only SAM 3 is gated
        assert "Options… dialog" in window and "--weights" not in window  # the window's words
