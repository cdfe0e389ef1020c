"""Nesting depth of JSON: of a text found without parsing it (vectorised, strings skipped), so a
100 000-deep array is refused before a recursive parser goes into it; and of a value already
parsed by orjson (which refuses more than 1024 levels on its own), a cheaper walk."""

from __future__ import annotations

import numpy as np

_CHUNK = 1 << 24
#: byte -> 1 quote, 2 backslash, 3 opening bracket, 4 closing bracket, 0 anything else
_CLASS = np.zeros(256, np.uint8)
_CLASS[ord('"')], _CLASS[ord("\\")] = 1, 2
_CLASS[[ord("["), ord("{")]] = 3
_CLASS[[ord("]"), ord("}")]] = 4


def json_depth_exceeds(data: bytes, limit: int) -> bool:
    """Whether arrays/objects nest deeper than ``limit`` anywhere in ``data`` (brackets inside
    strings, escaped quotes included, are not counted)."""
    buf = np.frombuffer(data, np.uint8)
    depth, in_string, start = 0, 0, 0
    while start < buf.size:
        end = min(start + _CHUNK, buf.size)
        while end < buf.size and buf[end - 1] == 0x5C:  # never split a run of backslashes
            end += 1
        depth, top, in_string = _scan(buf[start:end], depth, in_string)
        if top > limit:
            return True
        start = end
    return False


def _scan(chunk: np.ndarray, depth: int, in_string: int) -> tuple[int, int, int]:
    """(depth at the end, deepest level, inside a string at the end) of one chunk."""
    cls = _CLASS[chunk]
    pos = np.flatnonzero(cls)
    if pos.size == 0:
        return depth, depth, in_string
    c = cls[pos]
    follows = np.r_[False, (np.diff(pos) == 1) & (c[:-1] == 2)]  # entry j-1: a backslash right before j
    index = np.arange(pos.size)
    run = index - np.maximum.accumulate(np.where(~follows, index, 0))  # backslashes right before j
    quote = (c == 1) & (run % 2 == 0)
    quotes_before = np.cumsum(quote) - quote
    inside = (quotes_before + in_string) % 2 == 1
    step = np.where(inside, 0, np.where(c == 3, 1, np.where(c == 4, -1, 0))).astype(np.int64)
    levels = depth + np.cumsum(step)
    return int(levels[-1]), max(depth, int(levels.max())), int((in_string + int(quote.sum())) % 2)


#: orjson reads an integer literal beyond 64 bits as a float, of at least this magnitude
HUGE = float(1 << 63)


#: the value types the walk looks at: containers to go into, floats to check
_WATCHED = frozenset((dict, list, float))


def scan_parsed(value: object, limit: int) -> tuple[bool, bool]:
    """(arrays/objects nest deeper than ``limit``, a float of magnitude ≥ :data:`HUGE` — maybe
    an integer literal that orjson read as a float — is met) of a parsed JSON value (the dicts
    and lists a JSON parser builds; the depth answer of a valid text is that of
    :func:`json_depth_exceeds`). One level at a time, without recursion; stops at the first
    of the two it meets."""
    if type(value) is float and not -HUGE < value < HUGE:
        return False, True
    dicts = [value] if type(value) is dict else []
    lists = [value] if type(value) is list else []
    depth = 0
    while dicts or lists:
        depth += 1
        if depth > limit:
            return True, False
        # a scalar costs one type() and one set lookup; inner: the containers and huge floats
        inner = [v for c in dicts for v in c.values()
                 if type(v) in _WATCHED and (type(v) is not float or not -HUGE < v < HUGE)]  # fmt: skip
        inner += [v for c in lists for v in c
                  if type(v) in _WATCHED and (type(v) is not float or not -HUGE < v < HUGE)]  # fmt: skip
        dicts = [v for v in inner if type(v) is dict]
        lists = [v for v in inner if type(v) is list]
        if len(dicts) + len(lists) < len(inner):
            return False, True
    return False, False
