"""Live models at real size, proven on tiny real checkpoints:
interruptible forward passes, the memory check before loading, the checkpoint hash remembered
per file across processes."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from masklens.core.cache import file_hashes
from masklens.core.errors import Cancelled, ModelError
from masklens.core.models.base import SegmentRequest
from masklens.core.models.interrupt import cancel_check
from masklens.core.models.memory_fit import check_fits, estimate_bytes, safetensors_bytes
from masklens.core.models.registry import create_segmenter
from masklens.core.models.weights import checkpoint_hash

pytest.importorskip("transformers")


# ------------------------------------------------------------------ cancel mid-forward
def test_cancel_check_interrupts_the_forward_pass_and_keeps_nothing(tiny_sam3, rgb_image):
    seg = create_segmenter("sam3", weights=str(tiny_sam3), device="cpu")
    seg.ensure_loaded()
    calls = {"n": 0}

    def check() -> None:  # cancelled after the 20th submodule of the pass
        calls["n"] += 1
        if calls["n"] > 20:
            raise Cancelled()

    with cancel_check(check), pytest.raises(Cancelled):
        seg.segment(rgb_image, SegmentRequest("red square"))
    assert calls["n"] == 21  # stopped at the first check after the flag, inside the pass
    assert seg.encodings.stats.entries == 0  # no half-computed image encoding kept
    again = seg.segment(rgb_image, SegmentRequest("red square"))  # the next run works
    fresh = create_segmenter("sam3", weights=str(tiny_sam3), device="cpu").segment(
        rgb_image, SegmentRequest("red square"))
    assert again.scores == fresh.scores and seg.encodings.stats.entries == 1


def test_without_a_check_or_from_another_thread_nothing_is_interrupted(tiny_clipseg, rgb_image):
    import threading

    seg = create_segmenter("clipseg", weights=str(tiny_clipseg), device="cpu")
    seg.ensure_loaded()
    out: list = []

    def refuse() -> None:
        raise Cancelled()

    with cancel_check(refuse):  # installed in this thread only
        worker = threading.Thread(target=lambda: out.append(seg.segment(rgb_image, SegmentRequest("red"))))
        worker.start()
        worker.join()
    assert len(out) == 1 and len(out[0].scores) == len(out[0].masks)


# ------------------------------------------------------------------ memory before loading
def test_a_checkpoint_that_does_not_fit_is_refused_before_loading(tiny_clipseg, rgb_image):
    needed = estimate_bytes([tiny_clipseg])
    stored = sum(p.stat().st_size for p in tiny_clipseg.glob("*.safetensors"))
    assert 0.9 * stored <= needed <= stored  # float32 weights: about the file, header excluded
    seg = create_segmenter("clipseg", weights=str(tiny_clipseg), device="cpu")
    with pytest.raises(ModelError) as err:
        seg.ensure_loaded(available=lambda device: needed // 2)
    text = str(err.value)
    assert "clipseg" in text and "only" in text and "available on cpu" in text
    assert seg.model is None  # nothing was loaded
    seg.ensure_loaded(available=lambda device: needed * 10)  # enough: loads
    assert seg.model is not None
    assert check_fits([tiny_clipseg], "cpu", backend="x", available=lambda d: None) == needed  # unknown: no check


def test_half_precision_weights_count_as_float32(tmp_path):
    header = {"w": {"dtype": "BF16", "shape": [1000, 10], "data_offsets": [0, 20000]},
              "i": {"dtype": "I64", "shape": [10], "data_offsets": [20000, 20080]}}
    raw = json.dumps(header).encode()
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * 20080)
    assert safetensors_bytes(path) == 1000 * 10 * 4 + 10 * 8


# ------------------------------------------------------------------ the hash, remembered per file
def test_the_hash_is_remembered_per_file_across_processes(tmp_path, monkeypatch):
    monkeypatch.setenv("MASKLENS_CACHE_DIR", str(tmp_path / "cache"))
    file = tmp_path / "model.safetensors"
    file.write_bytes(b"\x00" * 1000)
    first = checkpoint_hash(file)
    assert first == hashlib.sha256(b"\x00" * 1000).hexdigest()
    stat = file.stat()
    # same size, mtime and inode but other bytes: only a remembered hash can answer the old one
    with open(file, "r+b") as fh:
        fh.write(b"\x01")
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    code = ("from masklens.core.models.weights import checkpoint_hash; import sys; "
            "print(checkpoint_hash(sys.argv[1]))")
    other = subprocess.run([sys.executable, "-c", code, str(file)], capture_output=True, text=True,
                           env={**os.environ}, check=True)
    assert other.stdout.strip() == first  # another process: from the memo file, not re-read
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # touched: hashed again
    assert checkpoint_hash(file) == hashlib.sha256(b"\x01" + b"\x00" * 999).hexdigest()


def test_an_unwritable_memo_folder_still_hashes(tmp_path, monkeypatch):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("MASKLENS_CACHE_DIR", str(blocker))
    file_hashes.forget_in_memory()
    file = tmp_path / "w.bin"
    file.write_bytes(b"abc")
    assert checkpoint_hash(file) == hashlib.sha256(b"abc").hexdigest()


def test_load_does_not_wait_for_the_hash_and_provenance_has_it(tiny_clipseg, rgb_image, monkeypatch):
    import threading

    from masklens.core.models import weights

    gate = threading.Event()
    real = weights.checkpoint_hash

    def slow_hash(path):
        gate.wait(30)
        return real(path)

    monkeypatch.setattr(weights, "checkpoint_hash", slow_hash)
    seg = create_segmenter("clipseg", weights=str(tiny_clipseg), device="cpu")
    seg.ensure_loaded()  # returns while the hash is still held back
    assert seg.model is not None and not seg.weights._hashing.done()
    gate.set()
    result = seg.segment(np.asarray(rgb_image), SegmentRequest("red"))
    assert result.provenance["checkpoint_sha256"] == real(tiny_clipseg)


def test_cancel_stops_the_wait_for_a_checkpoint_hash(tiny_clipseg, monkeypatch):
    import threading

    from masklens.core.models import weights

    gate = threading.Event()
    real = weights.checkpoint_hash
    monkeypatch.setattr(weights, "checkpoint_hash", lambda path: (gate.wait(30), real(path))[1])
    seg = create_segmenter("clipseg", weights=str(tiny_clipseg), device="cpu")
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()

    def check() -> None:
        if cancel.is_set():
            raise Cancelled()

    with cancel_check(check), pytest.raises(Cancelled):
        seg.cache_identity()  # what a live prompt asks first; a new multi-GB file takes seconds
    gate.set()
    assert seg.cache_identity() == real(tiny_clipseg)  # the hash finished meanwhile, and is kept
