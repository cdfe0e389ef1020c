"""EncodingCache (bytes-bounded LRU), image_key, and the SQLite PredictionCache (real files)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from masklens.core.cache.entries import PredictionKey
from masklens.core.cache.model_cache import EncodingCache, image_key, nbytes_of
from masklens.core.cache.predictions import CACHE_DIR_ENV, PredictionCache, default_cache_dir
from masklens.core.errors import MasklensError
from masklens.core.masks import Mask
from masklens.core.models.base import SegmentRequest, SegmentResult


# ------------------------------------------------------------------ EncodingCache
def test_lru_is_bounded_by_bytes_not_count():
    c = EncodingCache(100)
    c.put("a", "A", 40)
    c.put("b", "B", 40)
    assert c.get("a") == "A"  # a is now most recent
    c.put("c", "C", 40)  # 120 > 100: evicts the least recently used, b
    assert "b" not in c and c.get("a") == "A" and c.get("c") == "C"
    st = c.stats
    assert (st.bytes, st.entries, st.evictions) == (80, 2, 1)
    c.put("d", "D", 5)
    c.put("e", "E", 5)  # small entries fit without evicting
    assert len(c) == 4 and c.stats.bytes == 90


def test_oversized_entry_is_not_kept_and_replacing_adjusts_bytes():
    c = EncodingCache(100)
    c.put("a", 1, 30)
    c.put("big", 2, 101)
    assert "big" not in c and c.get("a") == 1
    c.put("a", 3, 70)
    assert c.stats.bytes == 70 and c.get("a") == 3
    c.discard("a")
    assert c.stats.bytes == 0 and len(c) == 0


def test_hits_misses_and_clear():
    c = EncodingCache(10)
    assert c.get("x") is None
    c.put("x", 0, 1)
    assert c.get("x") == 0
    c.clear()
    assert c.get("x") is None
    st = c.stats
    assert (st.hits, st.misses, st.bytes, st.entries) == (1, 2, 0, 0)


def test_get_or_compute_computes_once_under_concurrency():
    c = EncodingCache(1 << 20)
    calls = []
    start = threading.Barrier(8)

    def compute():
        calls.append(1)
        time.sleep(0.05)
        return np.ones(10)

    results = []

    def worker():
        start.wait()
        results.append(c.get_or_compute("img", compute, lambda a: a.nbytes))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(results) == 8
    assert c.stats.bytes == 80


def test_get_or_compute_failure_is_not_cached():
    c = EncodingCache(100)

    def boom():
        raise RuntimeError("encoder failed")

    with pytest.raises(RuntimeError):
        c.get_or_compute("k", boom, lambda v: 1)
    assert c.get_or_compute("k", lambda: 5, lambda v: 1) == 5


def test_nbytes_of_nested_containers():
    a = np.zeros((4, 4), np.float32)
    assert nbytes_of({"x": a, "y": [a, (a,)]}) == 3 * 64
    assert nbytes_of(None) == 0


def test_nbytes_of_distinct_counts_a_shared_tensor_once():
    import torch

    from masklens.core.models.torch_device import tensor_nbytes

    t = torch.zeros((2, 8), dtype=torch.float16)
    other = torch.zeros(3, dtype=torch.float32)
    value = {"last": t, "hidden": (t, other), "none": None}
    assert nbytes_of(value) == 2 * 32 + 12
    assert nbytes_of(value, distinct=True) == tensor_nbytes(value) == 32 + 12


# ------------------------------------------------------------------ image_key
def test_image_key_is_a_content_hash():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 255, (20, 30, 3), dtype=np.uint8)
    assert image_key(img) == image_key(img.copy())
    other = img.copy()
    other[5, 5, 1] ^= 1
    assert image_key(other) != image_key(img)
    assert image_key(img.reshape(30, 20, 3)) != image_key(img)  # same bytes, other shape
    assert image_key(img.astype(np.int8)) != image_key(img)
    view = np.asfortranarray(img)  # non-contiguous layouts hash by content
    assert image_key(view) == image_key(img)


# ------------------------------------------------------------------ PredictionCache
def _result(seed: int = 0, n: int = 2) -> SegmentResult:
    rng = np.random.default_rng(seed)
    masks = [Mask.from_array(rng.random((12, 17)) > 0.5) for _ in range(n)]
    return SegmentResult(masks, [0.25 * (i + 1) for i in range(n)], presence=0.75,
                         provenance={"model": "m", "latency_ms": float("nan"), "device": "cpu"})


def _key(**over) -> PredictionKey:
    base = dict(backend="m", checkpoint="sha:1", image="img", prompt="a cat", role="positive",
                params={"score_threshold": 0.5})
    base.update(over)
    return PredictionKey.make(**base)


def test_round_trip_survives_reopen(tmp_path):
    with PredictionCache(tmp_path) as pc:
        pc.put(_key(), _result())
        assert len(pc) == 1
    with PredictionCache(tmp_path) as pc:
        got = pc.get(_key())
    want = _result()
    assert got is not None
    assert got.masks == want.masks and got.scores == want.scores and got.presence == 0.75
    assert got.provenance == {"model": "m", "latency_ms": None, "device": "cpu"}  # NaN -> null


def test_every_key_component_matters(tmp_path):
    pc = PredictionCache(tmp_path)
    pc.put(_key(), _result())
    assert _key() in pc and pc.get(_key()) is not None
    for change in (dict(backend="n"), dict(checkpoint="sha:2"), dict(image="img2"),
                   dict(prompt="a dog"), dict(role="negative"), dict(params={"score_threshold": 0.4})):
        assert pc.get(_key(**change)) is None, change
    # parameter order does not matter
    k1 = PredictionKey.make("m", "c", "i", "p", None, {"a": 1, "b": 2})
    k2 = PredictionKey.make("m", "c", "i", "p", None, {"b": 2, "a": 1})
    assert k1.digest == k2.digest
    # boxes/points of a request are part of the key
    plain = PredictionKey.for_request("m", "c", "i", SegmentRequest("cat"))
    boxed = PredictionKey.for_request("m", "c", "i", SegmentRequest("cat", boxes=[(0, 0, 5, 5)]))
    assert plain.digest != boxed.digest
    assert (pc.hits, pc.misses) == (1, 6)


def test_empty_result_and_clear_by_backend(tmp_path):
    pc = PredictionCache(tmp_path)
    pc.put(_key(), SegmentResult([], [], presence=None))
    pc.put(_key(backend="other"), _result())
    got = pc.get(_key())
    assert got is not None and got.masks == [] and got.presence is None
    assert pc.clear("other") == 1 and len(pc) == 1
    assert pc.clear() == 1 and len(pc) == 0


def test_file_image_key_tracks_modification(tmp_path):
    pc = PredictionCache(tmp_path / "c")
    f = tmp_path / "x.png"
    f.write_bytes(b"abc")
    assert pc.file_image_key(f) is None
    pc.remember_file_image_key(f, "k1")
    assert pc.file_image_key(f) == "k1"
    f.write_bytes(b"abcd")  # size changes -> forgotten
    assert pc.file_image_key(f) is None
    assert pc.file_image_key(tmp_path / "missing.png") is None


def test_uses_wal_and_shares_between_connections(tmp_path):
    a = PredictionCache(tmp_path)
    b = PredictionCache(tmp_path)
    a.put(_key(), _result())
    assert b.get(_key()) is not None
    mode = sqlite3.connect(a.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_killed_writer_leaves_every_committed_entry(tmp_path):
    """SIGKILL a process in the middle of writing; all entries it reported are readable."""
    code = textwrap.dedent(
        f"""
        import sys, numpy as np
        from masklens.core.cache.entries import PredictionKey
        from masklens.core.cache.predictions import PredictionCache
        from masklens.core.masks import Mask
        from masklens.core.models.base import SegmentResult
        pc = PredictionCache({str(tmp_path)!r})
        m = Mask.from_array(np.eye(64, dtype=bool))
        i = 0
        while True:
            pc.put(PredictionKey.make("m", "c", "img", f"p{{i}}"), SegmentResult([m] * 20, [0.5] * 20))
            print(i, flush=True)
            i += 1
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    done = -1
    for line in proc.stdout:  # pragma: no branch
        done = int(line)
        if done >= 30:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    pc = PredictionCache(tmp_path)
    assert sqlite3.connect(pc.path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    for i in range(done + 1):
        got = pc.get(PredictionKey.make("m", "c", "img", f"p{i}"))
        assert got is not None and len(got.masks) == 20


def test_corrupt_database_is_moved_aside(tmp_path):
    (tmp_path / PredictionCache.FILENAME).write_bytes(b"this is not sqlite" * 100)
    pc = PredictionCache(tmp_path)
    pc.put(_key(), _result())
    assert len(pc) == 1
    assert any(p.name.startswith(f"{PredictionCache.FILENAME}.corrupt-") for p in tmp_path.iterdir())


def test_unwritable_location_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(MasklensError) as err:
        PredictionCache(blocker / "sub")
    assert str(blocker / "sub") in str(err.value) and CACHE_DIR_ENV in str(err.value)


def test_default_location(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "here"))
    assert default_cache_dir() == tmp_path / "here"
    monkeypatch.delenv(CACHE_DIR_ENV)
    assert default_cache_dir().name == "masklens" or "masklens" in default_cache_dir().parts


def test_get_many_returns_hits_by_digest(tmp_path):
    pc = PredictionCache(tmp_path)
    keys = [_key(prompt=f"p{i}") for i in range(700)]  # more than one SQL chunk
    pc.put_many((k, _result(i % 3, n=1)) for i, k in enumerate(keys[:650]))
    got = pc.get_many([*keys, keys[0]])
    assert set(got) == {k.digest for k in keys[:650]}
    assert got[keys[4].digest].masks == _result(1, n=1).masks
    assert (pc.hits, pc.misses) == (650, 50)
    assert pc.get_many([]) == {}


def test_get_or_compute_caches_falsy_values():
    c = EncodingCache(10)
    calls = []
    for _ in range(3):
        assert c.get_or_compute("k", lambda: calls.append(1), lambda v: 1) is None
    assert len(calls) == 1 and c.stats.hits == 2 and c.stats.misses == 1
