"""gc_paused: collection back on after the pause, what it made moved to the oldest generation
without a walk, and no cycle escapes the collector."""

from __future__ import annotations

import gc
import weakref

import pytest

from masklens.core.runtime import gc_pause
from masklens.core.runtime.gc_pause import gc_paused


@pytest.fixture(autouse=True)
def _nothing_frozen(monkeypatch) -> None:
    """Earlier tests in the process may have frozen objects (the GUI's settle_heap): thaw them,
    so the pause's own rule (promote only when nothing is frozen) is what is tested."""
    gc.unfreeze()
    monkeypatch.setattr(gc_pause, "_frozen", False)  # what the module remembers of freezes
    assert gc.isenabled()


@pytest.fixture
def freeze_counts(monkeypatch) -> list[int]:
    """Every call of gc.get_freeze_count (it walks the frozen objects one by one)."""
    calls: list[int] = []
    real = gc.get_freeze_count

    def counted() -> int:
        calls.append(real())
        return calls[-1]

    monkeypatch.setattr(gc, "get_freeze_count", counted)
    return calls


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


def _still_frozen(objects: list) -> bool:
    """All in the permanent generation: none among the collected generations' objects."""
    tracked = {id(o) for o in gc.get_objects()}
    return not any(id(o) in tracked for o in objects)


def _bulk_load() -> list[dict]:
    return [{"i": i, "v": [i]} for i in range(100_000)]


def test_collection_back_on_and_young_generation_empty_after_bulk() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        data = _bulk_load()
    assert gc.isenabled()
    assert gc.get_count()[0] < gc.get_threshold()[0]  # no pass over the 100 000 dicts pending
    assert gc.get_freeze_count() == 0  # moved to the oldest generation, not frozen
    assert gc.is_tracked(data[0])
    del data


def test_cycle_made_after_the_load_is_still_collected_automatically() -> None:
    with gc_paused():
        data = _bulk_load()
    node = _Node()
    ref = weakref.ref(node)
    del node
    kept: list[list] = []
    for _ in range(10 * gc.get_threshold()[0]):  # allocations only: automatic collection frees it
        kept.append([])
        if ref() is None:
            break
    assert ref() is None
    del data


def test_cycle_made_during_the_load_is_collected_by_a_full_collection() -> None:
    with gc_paused():
        data = _bulk_load()
        node = _Node()
        ref = weakref.ref(node)
        del node
    assert ref() is not None  # not walked when the pause ended
    gc.collect()
    assert ref() is None
    del data


def test_someone_elses_freeze_is_kept() -> None:
    gc.collect()
    keep = [_Node() for _ in range(10)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused():
            data = _bulk_load()
        assert _still_frozen(keep)  # not unfrozen by the pause
        assert gc.get_freeze_count() <= frozen  # nor the bulk frozen on top
    finally:
        gc.unfreeze()
    del data, keep


def test_nested_pauses_reenable_once() -> None:
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_frozen_objects_are_not_counted_after_a_freeze(freeze_counts) -> None:
    """The window freezes its heap after scoring (a million objects at 20,000 entries): a pause
    ending on the GUI thread then must not count them (~0.1 s, the first filter's stall)."""
    keep = [_Node() for _ in range(10)]
    gc_pause.freeze()
    try:
        frozen = gc.get_freeze_count()
        freeze_counts.clear()
        for _ in range(2):
            with gc_paused():
                data = _bulk_load()
            del data
        assert freeze_counts == []
        assert gc.isenabled()
        # The freeze kept: our objects are still in the permanent generation (not among the
        # collected generations' objects), and the bulk was not frozen on top. The count is
        # not compared for equality: a frozen object freed elsewhere (a thread left by an
        # earlier test) lowers it.
        assert _still_frozen(keep)
        assert gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
    del keep


def test_someone_elses_freeze_is_counted_once(freeze_counts) -> None:
    keep = [_Node() for _ in range(10)]
    gc.freeze()
    try:
        for _ in range(3):
            with gc_paused():
                data = _bulk_load()
            del data
        assert len(freeze_counts) == 1 and freeze_counts[0] > 0
    finally:
        gc.unfreeze()
    del keep


def test_the_switch_interval_is_short_while_any_worker_runs_and_given_back_after_the_last():
    import sys

    default = sys.getswitchinterval()
    short = min(default, gc_pause.WORKER_SWITCH_INTERVAL)
    gc_pause.shorten_switch_interval()
    gc_pause.shorten_switch_interval()  # a second worker
    assert sys.getswitchinterval() == short
    gc_pause.restore_switch_interval()
    assert sys.getswitchinterval() == short  # one still runs
    gc_pause.restore_switch_interval()
    assert sys.getswitchinterval() == default


def test_collected_later_freezes_what_the_block_made():
    assert gc.isenabled()
    before = gc.get_freeze_count()
    with gc_pause.collected_later():
        kept = [[i] for i in range(1000)]  # lists: tracked by the collector
        assert not gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() >= before + len(kept)
