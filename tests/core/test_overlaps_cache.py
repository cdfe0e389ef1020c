"""OverlapsCache: keyed by the identity of the overlap objects, least recently used dropped."""

from __future__ import annotations

from masklens.core.scoring.contract import OverlapsCache


def test_overlaps_cache_matches_by_identity_and_keeps_the_last_lists() -> None:
    calls: list[int] = []

    def build(tag: int):
        return lambda: calls.append(tag) or tag

    a, b, c = [object(), object()], [object()], [object()]
    cache = OverlapsCache(size=2)
    assert cache.get(a, build(1)) == 1
    assert cache.get(list(a), build(9)) == 1  # a new list of the same objects is a hit
    assert cache.get([a[0], object()], build(2)) == 2  # a replaced element rebuilds
    assert calls == [1, 2]
    cache.get(a, build(9))  # a is now the most recent: b-like entry [a0, x] is next to go
    assert cache.get(b, build(3)) == 3
    assert cache.get(a, build(9)) == 1
    assert cache.get(c, build(4)) == 4  # evicts b
    assert cache.get(b, build(5)) == 5
    assert calls == [1, 2, 3, 4, 5]
