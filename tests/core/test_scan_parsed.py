"""scan_parsed (one level at a time, type checks per value) equals a straightforward walk."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from masklens.core.files.json_depth import HUGE, json_depth_exceeds, scan_parsed


def _plain(value: object, limit: int) -> tuple[bool, bool]:
    """Level by level with a Python check per value (what scan_parsed replaces)."""
    if isinstance(value, float) and not -HUGE < value < HUGE:
        return False, True
    level, depth = [value] if isinstance(value, (dict, list)) else [], 0
    while level:
        depth += 1
        if depth > limit:
            return True, False
        inner = [v for c in level for v in (c.values() if isinstance(c, dict) else c)]
        if any(isinstance(v, float) and not -HUGE < v < HUGE for v in inner):
            return False, True
        level = [v for v in inner if isinstance(v, (dict, list))]
    return False, False


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(1 << 64), 1 << 64), st.text(max_size=3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([HUGE, -HUGE, HUGE * 0.999999, float(1 << 64), 1e300]),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=2), inner, max_size=4),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(values, st.integers(0, 8))
def test_scan_parsed_equals_plain_walk(value: object, limit: int) -> None:
    assert scan_parsed(value, limit) == _plain(value, limit)


@settings(max_examples=200, deadline=None)
@given(values, st.integers(0, 8))
def test_depth_answer_equals_text_scan(value: object, limit: int) -> None:
    text = json.dumps(value).encode()
    too_deep, huge = scan_parsed(json.loads(text), limit)
    if not huge:
        assert too_deep == json_depth_exceeds(text, limit)
