"""Input limits (core/files/limits.py, docs/reliability.md): refused before allocation, with the
project's error naming file, record and field; valid input unchanged."""

from __future__ import annotations

import json
import os
import struct
import threading
import zlib

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pycocotools import mask as mask_utils

from masklens.core.errors import DataFormatError
from masklens.core.files.io import read_json
from masklens.core.files.json_depth import json_depth_exceeds, scan_parsed
from masklens.core.files.limits import check_image_header, check_npy_header, current
from masklens.core.masks import Mask
from masklens.core.runtime.config import ConfigError


def _no_hang(fn, *args):
    """Call fn(*args) in a thread; fail (instead of hanging the suite) if it blocks."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), f"{fn.__name__} blocked"
    if "error" in box:
        raise box["error"]
    return box["value"]


# ------------------------------------------------------------------------------ read_json
def test_read_json_refuses_a_fifo_without_blocking(tmp_path):
    f = tmp_path / "ann.json"
    os.mkfifo(f)
    with pytest.raises(DataFormatError, match="FIFO") as exc:
        _no_hang(read_json, f)
    assert str(f) in str(exc.value)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_read_json_refuses_devices(device):
    with pytest.raises(DataFormatError, match="device"):
        _no_hang(read_json, device)


def test_read_json_refuses_deep_nesting_and_huge_integers(tmp_path):
    f = tmp_path / "a.json"
    f.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(DataFormatError, match="nest deeper than the limit"):
        read_json(f)
    f.write_text('{"a": [' + "9" * 5000 + "]}")
    with pytest.raises(DataFormatError, match="not valid JSON"):
        read_json(f)


def test_read_json_size_and_depth_limits_are_configurable(tmp_path, monkeypatch):
    f = tmp_path / "a.json"
    f.write_text(json.dumps({"a": [[[1]]], "pad": "x" * 1000}))
    assert read_json(f)["a"] == [[[1]]]
    monkeypatch.setenv("MASKLENS_MAX_JSON_DEPTH", "3")
    with pytest.raises(DataFormatError, match=r"limit \(3 levels\)"):
        read_json(f)
    monkeypatch.delenv("MASKLENS_MAX_JSON_DEPTH")
    monkeypatch.setenv("MASKLENS_MAX_JSON_BYTES", "500")
    with pytest.raises(DataFormatError, match=r"larger than the limit \(500 bytes\)"):
        read_json(f)
    monkeypatch.setenv("MASKLENS_MAX_JSON_BYTES", "lots")
    with pytest.raises(ConfigError, match="MASKLENS_MAX_JSON_BYTES"):
        read_json(f)


def test_read_json_names_an_overlong_path(tmp_path):
    with pytest.raises(DataFormatError, match="too long"):
        read_json(tmp_path / ("n" * 5000))


def _depth(o) -> int:
    if isinstance(o, (list, dict)):
        return 1 + max((_depth(v) for v in (o.values() if isinstance(o, dict) else o)), default=0)
    return 0


TEXT = st.text(alphabet='ab[]{}"\\\n', max_size=6)
JSONISH = st.recursive(st.none() | st.integers() | TEXT,
                       lambda kids: st.lists(kids, max_size=3) | st.dictionaries(TEXT, kids, max_size=3),
                       max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(JSONISH)
def test_depth_scan_matches_the_parsed_depth(value):
    """Brackets, quotes and backslashes inside strings never count; the real nesting does."""
    data = json.dumps(value).encode()
    d = _depth(value)
    assert json_depth_exceeds(data, d) is False
    if d > 0:
        assert json_depth_exceeds(data, d - 1) is True


@settings(max_examples=300, deadline=None)
@given(JSONISH, st.integers(0, 6))
def test_parsed_value_walk_agrees_with_the_text_scan(value, limit):
    """read_json walks what orjson parsed instead of scanning the text: same answer at any limit."""
    data = json.dumps(value).encode()
    assert scan_parsed(json.loads(data), limit) == (json_depth_exceeds(data, limit), False)


@pytest.mark.parametrize("depth", [63, 64, 65, 1024, 1025, 5000])
@pytest.mark.parametrize("nan", [False, True])  # NaN: orjson refuses it, json reads it
def test_read_json_depth_limit_at_its_edge(tmp_path, depth, nan):
    """64 levels read, 65 refused with the limit's message, whether orjson (≤ 1024 levels) or
    ``json`` (the text scanned first) parses the file."""
    f = tmp_path / "a.json"
    f.write_text("[" * (depth - 1) + ('{"v": NaN}' if nan else '{"v": 1}') + "]" * (depth - 1))
    if depth <= current().max_json_depth:
        assert _depth(read_json(f)) == depth
    else:
        with pytest.raises(DataFormatError, match=r"nest deeper than the limit \(64 levels\)"):
            read_json(f)


# ------------------------------------------------------------------------------ masks
def _rle_string(counts: list[int]) -> str:
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


def _counts(h, w):
    return _rle_string([h * w])


def test_rle_string_matches_pycocotools():
    for runs in ([6], [0, 3, 3], [2, 5, 1, 40, 2]):
        ref = mask_utils.frPyObjects({"size": [1, sum(runs)], "counts": runs}, 1, sum(runs))["counts"].decode()
        assert _rle_string(runs) == ref


@pytest.mark.parametrize("size", [[100000, 100000], [1, 2**31], [40000, 10]])
def test_rle_beyond_the_size_limit_is_refused_before_decoding(size):
    seg = {"size": size, "counts": _counts(*size)}  # counts consistent with the size
    with pytest.raises(DataFormatError, match="larger than the limit") as exc:
        Mask.from_coco(seg, path="p.json", record="[3]")
    assert "p.json, record [3], field 'segmentation'" in str(exc.value)


@pytest.mark.parametrize("size", [[1e30, 5], [True, 320], [320, False], ["3", 3], [-1, 4]])
def test_rle_size_must_be_non_negative_integers(size):
    with pytest.raises(DataFormatError, match="RLE 'size'"):
        Mask.from_coco({"size": size, "counts": "0"})


def test_mask_limits_follow_the_environment(monkeypatch):
    seg = {"size": [320, 200], "counts": _counts(320, 200)}
    assert Mask.from_coco(seg).shape == (320, 200)
    monkeypatch.setenv("MASKLENS_MAX_MASK_SIDE", "256")
    with pytest.raises(DataFormatError, match="256 px a side"):
        Mask.from_coco(seg)
    monkeypatch.setenv("MASKLENS_MAX_MASK_SIDE", "1000")
    monkeypatch.setenv("MASKLENS_MAX_MASK_PIXELS", "1000")
    with pytest.raises(DataFormatError, match="1000 pixels"):
        Mask.from_coco(seg)
    assert current().max_mask_pixels == 1000


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), 1e308, 1e30, -1e30, 401.0, -101.0])
def test_polygon_coordinates_must_be_finite_and_near_the_image(bad):
    poly = [10.0, 10.0, 50.0, 10.0, 50.0, 50.0]
    poly[3] = bad  # a y coordinate; the image is 100 high, margin 1× its size: [-100, 200]
    with pytest.raises(DataFormatError, match="polygon coordinate y=") as exc:
        Mask.from_coco([poly], 100, 200, path="a.json", record="annotation id 4")
    assert "a.json, record annotation id 4, field 'segmentation'" in str(exc.value)


def test_polygons_within_the_margin_decode_as_pycocotools_does():
    poly = [-50.0, -20.0, 250.0, 10.0, 120.0, 180.0, 3.5, 99.5]  # partly outside the 100 × 200 image
    mine = Mask.from_coco([poly], 100, 200)
    ref = mask_utils.merge(mask_utils.frPyObjects([poly], 100, 200))
    assert mine.rle["counts"] == ref["counts"] and mine.area > 0


# ------------------------------------------------------------------------------ PNG / NPY headers
def _png_header(w, h) -> bytes:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    chunk = struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + chunk


def test_png_header_beyond_the_limit_is_refused_before_decoding(tmp_path):
    f = tmp_path / "m.png"
    f.write_bytes(_png_header(100000, 100000))
    with pytest.raises(DataFormatError, match="100000 × 100000 pixels is larger than the limit"):
        Mask.from_png(f)
    ok = tmp_path / "ok.png"
    cv2.imwrite(str(ok), np.eye(8, dtype=np.uint8) * 255)
    check_image_header(ok)
    assert Mask.from_png(ok).area == 8


def test_mask_png_fifo_is_refused_without_blocking(tmp_path):
    f = tmp_path / "m.png"
    os.mkfifo(f)
    with pytest.raises(DataFormatError, match="FIFO"):
        _no_hang(Mask.from_png, f)


def _npy(tmp_path, shape, descr="<f8"):
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    f = tmp_path / "s.npy"
    f.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + b"\0" * 16)
    return f


@pytest.mark.parametrize(("make", "message"), [
    (lambda t: _npy(t, (100000, 100000)), "larger than the limit"),
    (lambda t: _npy(t, (3000, 3000)), "truncated"),
    (lambda t: _npy(t, (4, 4), "<c16"), "dtype complex128"),
    (lambda t: _npy(t, (4, 4), "|O"), "dtype object"),
    (lambda t: _npy(t, (2, 4, 4)), "expected a 2-D array"),
    (lambda t: _npy(t, (0, 0)), "is empty"),
])
def test_npy_header_is_checked_before_allocation(tmp_path, make, message):
    with pytest.raises(DataFormatError, match=message):
        check_npy_header(make(tmp_path), path="pred.json", record="[0]", field="score_map")


def test_a_real_npy_passes_the_header_check(tmp_path):
    f = tmp_path / "ok.npy"
    np.save(f, np.zeros((5, 7), np.float32))
    shape, dtype = check_npy_header(f)
    assert shape == (5, 7) and dtype == np.float32
