"""ModelManager: lazy creation, reuse, and unloading on switch when models would not fit together."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from masklens.core.errors import ModelError
from masklens.core.models.base import BackendInfo, Segmenter, SegmentRequest, SegmentResult
from masklens.core.models.manager import ModelManager, estimate_gpu_bytes, free_gpu_bytes

GIB = 1 << 30


class Device:
    """A simulated accelerator: free memory = total - what the live segmenters hold."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.residents: list[SizedSegmenter] = []

    def free(self) -> int:
        return self.total - sum(s.memory_bytes() for s in self.residents)


class SizedSegmenter(Segmenter):
    """Holds ``size`` bytes on the device once it has run, none after unload."""

    def __init__(self, name: str, size: int, gpu: Device, **options: Any) -> None:
        self.info = BackendInfo(name, name, None, 0.5, needs_weights=False)
        self.size, self.device, self.options = size, gpu, options
        self.loaded = False
        self.loads = 0
        gpu.residents.append(self)

    def memory_bytes(self) -> int:
        return self.size if self.loaded else 0

    def segment(self, image: np.ndarray, request: SegmentRequest) -> SegmentResult:
        if not self.loaded:
            if self.device.free() < self.size:
                raise RuntimeError("CUDA out of memory (simulated)")
            self.loaded = True
            self.loads += 1
        return SegmentResult([], [])

    def unload(self) -> None:
        self.loaded = False


def make_manager(total: int, sizes: dict[str, int], **kw: Any) -> tuple[ModelManager, list]:
    dev = Device(total)
    created: list[SizedSegmenter] = []

    def factory(name: str, **options: Any) -> Segmenter:
        if name not in sizes:
            raise ModelError(f"unknown model '{name}'")
        seg = SizedSegmenter(name, sizes[name], dev, **options)
        created.append(seg)
        return seg

    return ModelManager(factory=factory, free_memory=dev.free, **kw), created


def use(manager: ModelManager, name: str, **options: Any) -> SizedSegmenter:
    seg = manager.get(name, **options)
    seg.segment(np.zeros((4, 4, 3), np.uint8), SegmentRequest("x"))
    return seg  # type: ignore[return-value]


def test_creates_lazily_and_reuses():
    m, created = make_manager(10 * GIB, {"a": GIB})
    assert created == [] and m.active is None
    a = m.get("a", device="cuda")
    assert created == [a] and not a.loaded  # created, weights not loaded until used
    assert m.get("a", device="cuda") is a and len(created) == 1
    assert m.get("a", device="cuda", score_threshold=0.3) is not a  # other options: another model


def test_models_that_fit_together_stay_loaded():
    m, _ = make_manager(10 * GIB, {"a": 3 * GIB, "b": 3 * GIB})
    a = use(m, "a")
    b = use(m, "b")  # b's size unknown yet: a is unloaded to be safe
    assert not a.loaded and m.unloaded == ["a"]
    a = use(m, "a")  # a comes back (recreated); its footprint is now known and fits beside b
    b2 = use(m, "b")
    assert b2 is b and b.loaded and a.loaded is True
    use(m, "a")
    assert m.unloaded == ["a"] and a.loaded and b.loaded


def test_switch_unloads_what_would_not_fit():
    m, _ = make_manager(10 * GIB, {"a": 4 * GIB, "b": 4 * GIB, "big": 7 * GIB})
    use(m, "a")
    m.unload()
    use(m, "b")
    use(m, "big")  # learn big's size (a and b were dropped then)
    a = use(m, "a")
    b = use(m, "b")
    assert m.known_footprint("big") == 7 * GIB
    assert a.loaded and b.loaded  # 8 GiB of 10 used
    big = use(m, "big")  # needs 7 (x1.2 headroom): both others must go, LRU first
    assert big.loaded and not a.loaded and not b.loaded
    assert m.unloaded[-2:] == ["a", "b"]


def test_lru_order_and_budget():
    m, _ = make_manager(100 * GIB, {"a": 2 * GIB, "b": 2 * GIB, "c": 2 * GIB}, gpu_budget_bytes=5 * GIB)
    for n in ("a", "b", "c"):  # learn the sizes
        use(m, n)
        m.unload()
    a, b = use(m, "a"), use(m, "b")
    use(m, "a")  # a is now more recently used than b
    c = use(m, "c")  # 2+2+2.4 > 5: drop one, the LRU one (b)
    assert c.loaded and a.loaded and not b.loaded


def test_cpu_models_never_force_an_unload_but_max_loaded_bounds_them():
    m, _ = make_manager(GIB, {"a": GIB, "b": 0})
    a = use(m, "a", device="cuda")
    use(m, "b", device="cpu")
    assert a.loaded and m.unloaded == []
    use(m, "b", device="cuda")  # the same backend on the GPU, footprint unknown: a must go
    assert not a.loaded and m.unloaded == ["a"]
    m2, _ = make_manager(GIB, {"a": 0, "b": 0}, max_loaded=1)
    use(m2, "a", device="cpu")
    use(m2, "b", device="cpu")
    assert [s.name for s in m2.loaded()] == ["b"] and m2.unloaded == ["a"]


def test_out_of_memory_call_unloads_others_and_retries():
    m, _ = make_manager(10 * GIB, {"a": 6 * GIB, "b": 6 * GIB})
    a = use(m, "a")
    m._known.clear()  # pretend b is known to be small so it is loaded beside a
    m._known[("b", "{}")] = 1
    m.get("b")
    assert a.loaded
    result = m.call("b", lambda s: s.segment(np.zeros((2, 2, 3), np.uint8), SegmentRequest("x")))
    assert isinstance(result, SegmentResult) and not a.loaded and m.unloaded == ["a"]
    with pytest.raises(ValueError):
        m.call("b", lambda s: (_ for _ in ()).throw(ValueError("other errors propagate")))


def test_unknown_model_is_a_model_error_and_manager_stays_usable():
    m, _ = make_manager(GIB, {"a": 1})
    with pytest.raises(ModelError):
        m.get("nope")
    assert m.active is None
    assert m.get("a") is not None


def test_thread_safe_get_creates_once():
    m, created = make_manager(GIB, {"a": 1})
    go = threading.Barrier(6)
    out = []

    def worker():
        go.wait()
        out.append(m.get("a", device="cuda"))

    ts = [threading.Thread(target=worker) for _ in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(created) == 1 and all(o is created[0] for o in out)


def test_real_registry_backend_and_no_cuda_here(monkeypatch):
    """With the real registry: a registered backend is created through create_segmenter."""
    from masklens.core.models import registry

    info = BackendInfo("test-manager-null", "null", None, 0.5, needs_weights=False)

    class Null(Segmenter):
        def __init__(self, **options: Any) -> None:
            self.info = info
            self.unloads = 0

        def segment(self, image, request):
            return SegmentResult([], [])

        def unload(self) -> None:
            self.unloads += 1

    monkeypatch.setattr(registry, "BACKENDS", registry.BACKENDS.copy())
    registry.register_backend(info, Null)
    m = ModelManager()
    seg = m.get("test-manager-null", device="cpu")
    assert isinstance(seg, Null) and estimate_gpu_bytes(seg) == 0
    m.unload()
    assert seg.unloads == 1 and m.loaded() == []
    assert free_gpu_bytes() is None or free_gpu_bytes() > 0


def test_footprint_of_torch_modules_counts_only_accelerator_memory():
    torch = pytest.importorskip("torch")

    class Holder(Segmenter):
        info = BackendInfo("h", "h", None, 0.5)

        def __init__(self) -> None:
            self.model = torch.nn.Linear(10, 10)

        def segment(self, image, request):
            return SegmentResult([], [])

    h = Holder()
    assert estimate_gpu_bytes(h) == 0  # on the CPU
    if torch.cuda.is_available():  # pragma: no cover - no GPU in CI
        h.model.cuda()
        assert estimate_gpu_bytes(h) == 110 * 4
