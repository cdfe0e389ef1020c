"""The model process (core/models/remote.py, model_process.py): a real spawned process running a
tiny random CLIPSeg loaded from disk through the ordinary code path."""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest

pytest.importorskip("transformers")
pytestmark = pytest.mark.slow  # real spawned processes, seconds each

import tiny  # noqa: E402

from masklens.core.errors import Cancelled, ModelError  # noqa: E402
from masklens.core.models.base import SegmentRequest  # noqa: E402
from masklens.core.models.interrupt import cancel_check  # noqa: E402
from masklens.core.models.registry import create_segmenter  # noqa: E402
from masklens.core.models.remote import ModelHost, RemoteSegmenter, runs_apart, window_factory  # noqa: E402


@pytest.fixture(scope="module")
def clipseg_folder(tmp_path_factory):
    return tiny.build_clipseg(tmp_path_factory.mktemp("clipseg"))


@pytest.fixture(scope="module")
def slow_clipseg_folder(tmp_path_factory):
    return tiny.build_clipseg(tmp_path_factory.mktemp("slow-clipseg"), image_size=448, patch_size=8, layers=48)


@pytest.fixture
def host():
    h = ModelHost()
    yield h
    h.stop()


def cancelled_from_poll(n: int):
    """A cancel check that raises Cancelled from its ``n``-th call on: a waiting call polls it every
    POLL_S, so the request is in the process by then."""
    calls = [0]

    def check() -> None:
        calls[0] += 1
        if calls[0] >= n:
            raise Cancelled()

    return check


def _image(seed: int = 0) -> np.ndarray:
    img = np.random.default_rng(seed).integers(0, 255, (90, 140, 3), dtype=np.uint8)
    img[20:60, 30:90] = 255
    return img


def test_the_process_gives_the_answer_the_model_gives_here(host, clipseg_folder):
    options = {"weights": str(clipseg_folder), "device": "cpu", "score_threshold": 0.0}
    remote = RemoteSegmenter(host, "clipseg", options)
    local = create_segmenter("clipseg", **options)
    request = SegmentRequest("a white square")
    apart, here = remote.segment(_image(), request), local.segment(_image(), request)
    assert host.pid not in (None, os.getpid())
    assert [m.rle["counts"] for m in apart.masks] == [m.rle["counts"] for m in here.masks]
    assert apart.scores == here.scores and len(apart.masks) >= 1
    assert remote.provenance()["checkpoint_sha256"] == local.provenance()["checkpoint_sha256"]
    assert remote.cache_identity() == local.cache_identity()
    many = remote.segment_many(_image(), [request, SegmentRequest("a cat")])
    assert [r.scores for r in many] == [r.scores for r in local.segment_many(_image(), [request, SegmentRequest("a cat")])]
    assert remote.memory_bytes() == 0  # on the CPU: nothing on an accelerator
    assert host.state["torch"] is True


def test_a_failure_there_is_the_same_clear_error_here(host, tmp_path):
    remote = RemoteSegmenter(host, "clipseg", {"weights": str(tmp_path / "missing"), "device": "cpu"})
    with pytest.raises(ModelError) as err:
        remote.segment(_image(), SegmentRequest("x"))
    assert str(tmp_path / "missing") in str(err.value) and "weights not found" in str(err.value)
    assert err.value.hint  # the hint survives the trip
    pid = host.pid
    with pytest.raises(ModelError, match="unknown option"):
        RemoteSegmenter(host, "clipseg", {"colour": "red"}).segment(_image(), SegmentRequest("x"))
    assert host.running and host.pid == pid  # errors do not end the process


def test_cancel_stops_a_forward_pass_there_and_the_model_stays_loaded(host, slow_clipseg_folder):
    remote = RemoteSegmenter(host, "clipseg", {"weights": str(slow_clipseg_folder), "device": "cpu"})
    remote.ensure_loaded()
    pid = host.pid
    with cancel_check(cancelled_from_poll(3)), pytest.raises(Cancelled):  # a 48-layer pass: under way
        remote.segment(_image(2), SegmentRequest("a circle"))
    # a process that did not stop its pass would have been ended after the grace
    assert host.running and host.pid == pid
    assert remote.segment(_image(2), SegmentRequest("a circle")).masks is not None  # the next call works
    assert host.pid == pid  # in the same process


def test_a_process_that_does_not_stop_within_the_grace_after_cancel_is_ended(host, slow_clipseg_folder):
    """As when Cancel comes during a load, which has no hook point: the process never sees the
    cancel byte here (the parent writes to a stand-in), so it is ended CANCEL_GRACE_S after Cancel."""
    remote = RemoteSegmenter(host, "clipseg", {"weights": str(slow_clipseg_folder), "device": "cpu"})
    remote.ensure_loaded()
    pid = host.pid

    class Unseen:
        value = 0

    stand_in = Unseen()
    host._cancel = stand_in  # the process keeps its own byte, never set
    with cancel_check(cancelled_from_poll(3)), pytest.raises(Cancelled):
        remote.segment(_image(4), SegmentRequest("a square"))
    assert not host.running and stand_in.value == 1  # told, did not stop in time: ended
    assert remote.segment(_image(0), SegmentRequest("a square")).masks is not None  # a new process
    assert host.running and host.pid != pid


def test_a_process_that_dies_mid_call_fails_that_call_clearly_and_the_next_starts_anew(host, slow_clipseg_folder):
    remote = RemoteSegmenter(host, "clipseg", {"weights": str(slow_clipseg_folder), "device": "cpu"})
    remote.ensure_loaded()
    pid = host.pid
    threading.Timer(1.0, lambda: os.kill(pid, signal.SIGKILL)).start()
    with pytest.raises(ModelError, match="ended while working .*signal 9"):
        remote.segment(_image(3), SegmentRequest("a square"))
    assert not host.running
    assert remote.segment(_image(0), SegmentRequest("a square")).masks is not None
    assert host.running and host.pid != pid


def test_stop_ends_the_process(host, clipseg_folder):
    remote = RemoteSegmenter(host, "clipseg", {"weights": str(clipseg_folder), "device": "cpu"})
    remote.segment(_image(), SegmentRequest("x"))
    process = host._process
    remote.unload()
    host.stop()
    assert not host.running and process.exitcode == 0  # it stopped when asked, not killed


def test_which_backends_run_apart(monkeypatch):
    from masklens.core.models import registry

    assert runs_apart("clipseg") and runs_apart("sam3")
    assert not runs_apart("demo") and not runs_apart("replay") and not runs_apart("no-such-model")
    monkeypatch.setenv("MASKLENS_MODEL_PROCESS", "in-process")
    assert not runs_apart("clipseg")
    monkeypatch.setenv("MASKLENS_MODEL_PROCESS", "separate")
    info = registry.backend_info("clipseg")
    monkeypatch.setattr(registry, "BACKENDS", registry.BACKENDS.copy())
    registry.register_backend(info, lambda **_: None)  # replaced in this process only
    assert not runs_apart("clipseg")
    make = window_factory(ModelHost())
    assert make("demo").info.name == "demo"


def test_a_job_cancelled_while_waiting_for_its_turn_stops_at_once():
    """Another request holds the process (the warm-up's torch import takes seconds): a job
    cancelled meanwhile stops without waiting for it."""
    host = ModelHost()
    held, release = threading.Event(), threading.Event()

    def other_request() -> None:
        with host._lock:
            held.set()
            release.wait(10)

    threading.Thread(target=other_request, daemon=True).start()
    assert held.wait(5)
    try:
        with cancel_check(cancelled_from_poll(3)), pytest.raises(Cancelled):
            host.request("warm", None, "clipseg")
        assert not release.is_set() and not host.running  # it stopped while the other held its turn
    finally:
        release.set()
        host.stop()


def test_stop_while_a_call_waits_ends_that_call_with_a_clear_error(host, slow_clipseg_folder, monkeypatch):
    """The window closing while a pass runs that does not stop: stop() ends the process after its
    wait, and the waiting call fails with the process' end (not an internal error)."""
    from masklens.core.models import remote as remote_module

    remote = RemoteSegmenter(host, "clipseg", {"weights": str(slow_clipseg_folder), "device": "cpu"})
    remote.ensure_loaded()
    monkeypatch.setattr(remote_module, "STOP_TIMEOUT_S", 0.5)
    errors: list[BaseException] = []
    waiting = threading.Event()
    real_wait = remote_module.ModelHost._wait

    def wait_spy(self, check):  # the call has been sent and waits for its answer
        waiting.set()
        return real_wait(self, check)

    monkeypatch.setattr(remote_module.ModelHost, "_wait", wait_spy)

    def call() -> None:
        try:
            remote.segment(_image(5), SegmentRequest("a square"))
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            errors.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    assert waiting.wait(120)
    host.stop()
    caller.join(10)
    assert not host.running
    assert len(errors) == 1 and isinstance(errors[0], ModelError), errors
    assert "ended while working" in str(errors[0])
