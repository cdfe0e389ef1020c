"""JSON mutations of one input file: truncation, wrong types at every field path, missing and
extra keys, null/NaN/Infinity/huge numbers, unicode, duplicated and dangling ids, corrupt RLE
and polygons, deep nesting, huge integers and big files. Each returns a short description."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fuzz_cases import Workspace

Path_ = tuple[Any, ...]

HOSTILE_VALUES: list[Any] = [
    None, True, False, 0, -1, 1.5, -0.0, 2**63, 2**31, -(2**31), "x", "", "7", [], {}, [1, 2], {"a": 1},
    float("nan"), float("inf"), float("-inf"), 1e308, -1e308, 1e30, 10**40, "\ud800", "../../../etc/passwd",
    "/etc/passwd", "=cmd|' /C calc'!A0", "\u202eevil", "a\x00b", "x" * 5000,
]
UNICODE = ["\ud800", "\udfff", "\u0000", "\u202e\u202d", "😀" * 50, "ＡＢＣ", "é" * 3000, "\r\n=1+1", "＝SUM(A1)"]
SPECIAL_NUMBERS = [float("nan"), float("inf"), float("-inf"), 1e308, -1e308, 1e30, -1, 10**30, 2**64,
                   0.5, True, None, "1", 10**400, -(10**400)]  # longer integers: huge_integer
BAD_POLYGON_COORD = [float("nan"), float("inf"), float("-inf"), 1e308, -1e308, 1e30, -1e30, 2**62, 10**40]


def _walk(obj: Any, path: Path_ = ()) -> list[Path_]:
    out = [path]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _walk(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:50]):  # long lists: their first records carry every field path
            out += _walk(v, (*path, i))
    return out


def _schema(path: Path_) -> Path_:
    return tuple("*" if isinstance(p, int) else p for p in path)


def pick_path(rng: random.Random, obj: Any, want: Callable[[Any], bool] = lambda v: True) -> Path_ | None:
    """A concrete path, chosen uniformly over the *schema* paths (list indices folded), so every
    field path of the file gets its share however many records carry it."""
    by_schema: dict[Path_, list[Path_]] = {}
    for p in _walk(obj):
        if p and want(_get(obj, p)):
            by_schema.setdefault(_schema(p), []).append(p)
    if not by_schema:
        return None
    key = rng.choice(sorted(by_schema, key=repr))
    return rng.choice(by_schema[key])


def _get(obj: Any, path: Path_) -> Any:
    for p in path:
        obj = obj[p]
    return obj


def _set(obj: Any, path: Path_, value: Any) -> None:
    _get(obj, path[:-1])[path[-1]] = value


def _fmt(path: Path_) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) or "<root>"


# ----------------------------------------------------------------- mutations on parsed JSON
def wrong_type(rng, ws: Workspace, f: Path) -> str:
    obj = ws.load(f)
    path = pick_path(rng, obj)
    if path is None:
        return "wrong_type: nothing"
    value = rng.choice(HOSTILE_VALUES)
    _set(obj, path, value)
    ws.dump(f, obj)
    return f"wrong_type {_fmt(path)} = {value!r:.40}"


def missing_key(rng, ws: Workspace, f: Path) -> str:
    obj = ws.load(f)
    path = pick_path(rng, obj, lambda v: True)
    if path is None or not isinstance(_get(obj, path[:-1]), dict):
        path = pick_path(rng, obj, lambda v: isinstance(v, dict) and bool(v))
        if path is None:
            return "missing_key: nothing"
        path = (*path, rng.choice(list(_get(obj, path))))
    del _get(obj, path[:-1])[path[-1]]
    ws.dump(f, obj)
    return f"missing_key {_fmt(path)}"


def extra_key(rng, ws: Workspace, f: Path) -> str:
    obj = ws.load(f)
    path = pick_path(rng, obj, lambda v: isinstance(v, dict))
    target = obj if path is None else _get(obj, path)
    if not isinstance(target, dict):
        return "extra_key: nothing"
    key = rng.choice(["extra", "__proto__", "\ud800", "", "score_map", "id", "x" * 300])
    target[key] = rng.choice(HOSTILE_VALUES)
    ws.dump(f, obj)
    return f"extra_key {_fmt(path or ())}.{key!r:.20}"


def special_number(rng, ws: Workspace, f: Path) -> str:
    obj = ws.load(f)
    path = pick_path(rng, obj, lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
    if path is None:
        return "special_number: nothing"
    value = rng.choice(SPECIAL_NUMBERS)
    _set(obj, path, value)
    ws.dump(f, obj)
    return f"special_number {_fmt(path)} = {str(value)[:20]}"


def unicode_text(rng, ws: Workspace, f: Path) -> str:
    obj = ws.load(f)
    path = pick_path(rng, obj, lambda v: isinstance(v, str) and not v.endswith((".png", ".jpg")))
    if path is None:
        return "unicode: nothing"
    value = rng.choice(UNICODE)
    _set(obj, path, value)
    ws.dump(f, obj, ensure_ascii=rng.random() < 0.5)
    return f"unicode {_fmt(path)} = {value!r:.30}"


def duplicate_record(rng, ws: Workspace, f: Path) -> str:
    obj = ws.load(f)
    path = pick_path(rng, obj, lambda v: isinstance(v, list) and v and isinstance(v[0], dict))
    if path is None:
        path = () if isinstance(obj, list) and obj else None
    if path is None:
        return "duplicate: nothing"
    seq = _get(obj, path)
    seq.insert(rng.randrange(len(seq) + 1), rng.choice(seq))
    ws.dump(f, obj)
    return f"duplicate record in {_fmt(path)}"


def dangling_id(rng, ws: Workspace, f: Path) -> str:
    obj = ws.load(f)
    path = pick_path(rng, obj, lambda v: not isinstance(v, (dict, list)))
    ids = [p for p in _walk(obj) if p and isinstance(p[-1], str) and (p[-1] == "id" or p[-1].endswith(("_id", "_ids")))]
    if ids:
        path = rng.choice(ids)
    if path is None:
        return "dangling: nothing"
    value = rng.choice([987654321, -5, "987654321", [987654321], 0])
    _set(obj, path, value)
    ws.dump(f, obj)
    return f"dangling_id {_fmt(path)} = {value!r}"


#: fields that pair records (a bool or float here must never match the id 1)
PAIRING_IDS = ("image_id", "fp_source_id", "query_id", "ann_ids", "ann_id", "id")


def type_confusion(rng, ws: Workspace, f: Path) -> str:
    """An id that pairs records set to true / 1.0: must be refused, never taken as the id 1.
    Marks the workspace so that an exit 0 counts as "wrong type accepted"."""
    obj = ws.load(f)
    paths = [p for p in _walk(obj) if p and p[-1] in PAIRING_IDS]
    paths = [p for p in paths if not (p[-1] == "id" and "images" not in p and "vocabulary" not in p)]
    if not paths:
        return "type_confusion: nothing"
    path = rng.choice(paths)
    old = _get(obj, path)
    value: Any = rng.choice([True, False, 1.0]) if not isinstance(old, list) else [True]
    if isinstance(old, int) and not isinstance(old, bool) and value == 1.0 and rng.random() < 0.5:
        value = float(old)  # the same id as a float
    _set(obj, path, value)
    ws.dump(f, obj)
    ws.expect_error = True
    return f"type_confusion {_fmt(path)} = {value!r}"


def _segmentations(obj: Any) -> list[Path_]:
    return [p for p in _walk(obj) if isinstance(_get(obj, p), dict) and "counts" in _get(obj, p)]


def rle_string(counts: list[int]) -> str:
    """COCO compressed counts of the runs ``counts`` (pycocotools' rleToString, for any size)."""
    out = []
    for i, x in enumerate(counts):
        x = x - counts[i - 2] if i > 2 else x
        more = True
        while more:
            c = x & 0x1F
            x >>= 5
            more = x != -1 if c & 0x10 else x != 0
            out.append(chr((c | 0x20 if more else c) + 48))
    return "".join(out)


def _counts_for(h: int, w: int) -> str:
    """Valid compressed counts of an empty h × w mask (consistent with the size)."""
    return rle_string([h * w])


def corrupt_rle(rng, ws: Workspace, f: Path) -> str:
    obj = ws.load(f)
    segs = _segmentations(obj)
    if not segs:
        return "corrupt_rle: nothing"
    path = rng.choice(segs)
    seg = _get(obj, path)
    counts = seg["counts"] if isinstance(seg["counts"], str) else ""
    choice = rng.randrange(12)
    if choice == 0 and counts:
        i = rng.randrange(len(counts))
        seg["counts"] = counts[:i] + chr(rng.randrange(32, 127)) + counts[i + 1:]
    elif choice == 1:
        seg["counts"] = counts[: rng.randrange(len(counts) + 1)]
    elif choice == 2:
        seg["size"] = [1e30, seg["size"][1]]
    elif choice == 3:
        seg.update(size=[1, 2**31], counts=_counts_for(1, 2**31))
    elif choice == 4:
        seg.update(size=[100000, 100000], counts=_counts_for(100000, 100000))
    elif choice == 5:
        seg["size"] = rng.choice([[-1, 5], [True, 320], ["320", 320], [320], [], None, [0, 0], [2**64, 1]])
    elif choice == 6:
        seg["counts"] = rng.choice([[2**62, 1], [-1, 5], [1.5], [None], list(range(3)), "é" * 5, 7])
    elif choice == 7:
        h, w = rng.choice([(1, 1), (3, 5), (40000, 40000), (65536, 65536), (33000, 10)])
        seg.update(size=[h, w], counts=_counts_for(h, w))
    elif choice == 8:
        seg["counts"] = [1 << 40, 1]
        seg["size"] = [1 << 20, 1 << 20]
    elif choice == 9:
        seg["counts"] = counts + "0" * rng.randrange(1, 10)
    elif choice == 10:
        seg["counts"] = "\ud800" + counts
    else:
        del seg["size"]
    ws.dump(f, obj)
    return f"corrupt_rle#{choice} {_fmt(path)}"


def corrupt_polygon(rng, ws: Workspace, f: Path) -> str:
    obj = ws.load(f)
    segs = _segmentations(obj)
    if not segs:
        return "corrupt_polygon: nothing"
    path = rng.choice(segs)
    bad = rng.choice(BAD_POLYGON_COORD)
    poly = [10.0, 10.0, 50.0, 10.0, 50.0, 50.0, 10.0, 50.0]
    choice = rng.randrange(6)
    if choice == 0:
        poly[rng.randrange(len(poly))] = bad
        value: Any = [poly]
    elif choice == 1:
        value = [[bad] * 8]
    elif choice == 2:
        value = [poly[:4]]
    elif choice == 3:
        value = [[[1, 2], [3, 4]]]
    elif choice == 4:
        value = [[0.0, 0.0, 1e6, 0.0, 1e6, 1e6]]  # far outside any image
    else:
        value = [poly] * 2000 + [[True, False, 1, 2, 3, 4]]
    _set(obj, path, value)
    ws.dump(f, obj)
    return f"corrupt_polygon#{choice} {_fmt(path)} ({bad!r:.12})"


# ----------------------------------------------------------------------- raw-text mutations
def truncate(rng, ws: Workspace, f: Path) -> str:
    data = f.read_bytes()
    cut = rng.randrange(len(data))
    f.write_bytes(data[:cut])
    return f"truncate at {cut}/{len(data)}"


def _replace_a_value(rng, ws: Workspace, f: Path, text: str) -> str:
    obj = ws.load(f)
    path = pick_path(rng, obj, lambda v: not isinstance(v, (dict, list)))
    marker = "__FUZZ_MARKER__"
    if path is None:
        raw = f"[{marker}]"
    else:
        _set(obj, path, marker)
        raw = json.dumps(obj)
    f.write_text(raw.replace(f'"{marker}"', text).replace(marker, text))
    return _fmt(path or ())


def deep_nesting(rng, ws: Workspace, f: Path) -> str:
    depth = rng.choice([1000, 100_000])
    where = _replace_a_value(rng, ws, f, "[" * depth + "]" * depth)
    return f"deep_nesting {depth} at {where}"


def huge_integer(rng, ws: Workspace, f: Path) -> str:
    digits = rng.choice([400, 5000, 100_000])
    where = _replace_a_value(rng, ws, f, "9" * digits)
    return f"huge_integer {digits} digits at {where}"


def bad_literals(rng, ws: Workspace, f: Path) -> str:
    lit = rng.choice(["NaN", "Infinity", "-Infinity", "1e999", "-0", "1E400", "\"\\ud800\"", "\"\\u0000\""])
    where = _replace_a_value(rng, ws, f, lit)
    return f"literal {lit} at {where}"


def bad_bytes(rng, ws: Workspace, f: Path) -> str:
    data = bytearray(f.read_bytes())
    choice = rng.randrange(4)
    if choice == 0:
        data = b"\xef\xbb\xbf" + data  # BOM
    elif choice == 1:
        data[rng.randrange(len(data))] = rng.choice([0x00, 0xFF, 0xC3, 0x80])
    elif choice == 2:
        data = data.decode().encode("utf-16")
    else:
        data = b""
    f.write_bytes(bytes(data))
    return f"bad_bytes#{choice}"


def big_json(rng, ws: Workspace, f: Path, *, megabytes: int = 8) -> str:
    """A JSON padded to ``megabytes`` (streamed to disk, never built in memory): a huge string,
    a huge list of numbers in an extra field, or trailing whitespace."""
    n = megabytes << 20
    choice = rng.randrange(3)
    if choice == 2:
        with f.open("ab") as fh:
            for _ in range(megabytes):
                fh.write(b" " * (1 << 20))
        return f"big_json whitespace {megabytes} MB"
    obj = ws.load(f)
    marker = "__FUZZ_BIG__"
    if isinstance(obj, dict):
        obj["padding"] = marker
    elif obj and isinstance(obj[0], dict):
        obj[0]["padding"] = marker
    else:
        obj.append(marker)
    head, tail = json.dumps(obj).split(f'"{marker}"')
    piece = b"x" * (1 << 20) if choice == 0 else b"0," * (1 << 19)
    with f.open("wb") as fh:
        fh.write(head.encode() + (b'"' if choice == 0 else b"["))
        for _ in range(n // len(piece)):
            fh.write(piece)
        fh.write((b'"' if choice == 0 else b"0]") + tail.encode())
    return f"big_json#{choice} {megabytes} MB"


JSON_MUTATIONS: dict[str, Callable[..., str]] = {
    "truncate": truncate, "wrong_type": wrong_type, "missing_key": missing_key, "extra_key": extra_key,
    "special_number": special_number, "unicode": unicode_text, "duplicate": duplicate_record,
    "dangling_id": dangling_id, "type_confusion": type_confusion, "corrupt_rle": corrupt_rle, "corrupt_polygon": corrupt_polygon,
    "deep_nesting": deep_nesting, "huge_integer": huge_integer, "bad_literals": bad_literals,
    "bad_bytes": bad_bytes, "big_json": big_json,
}
