"""The one mask type: every accepted input form, RLE arithmetic, validation, resizing."""

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from pycocotools import mask as mask_utils

from masklens.core.errors import DataFormatError
from masklens.core.files.rle_validation import rle_counts_problem
from masklens.core.masks import (
    Mask,
    intersect_all,
    intersection_area,
    intersection_matrix,
    iou,
    iou_matrix,
    resize_nearest,
    union_all,
    union_area,
)


def box(h, w, y0, y1, x0, x1):
    a = np.zeros((h, w), bool)
    a[y0:y1, x0:x1] = True
    return a


def test_array_round_trip_and_area():
    a = box(20, 30, 2, 7, 3, 13)  # 5 x 10
    m = Mask.from_array(a)
    assert m.shape == (20, 30)
    assert m.area == 50
    assert np.array_equal(m.to_array(), a)
    assert m.bbox == (3.0, 2.0, 10.0, 5.0)


@settings(max_examples=60, deadline=None)
@given(arrays(np.bool_, st.tuples(st.integers(0, 24), st.integers(0, 24))))
def test_row_order_decode_equals_the_plain_one(a):
    m = Mask.from_array(a)
    c = m.to_array_c()
    assert c.dtype == np.bool_ and c.flags["C_CONTIGUOUS"] and c.shape == a.shape
    assert np.array_equal(c, m.to_array()) and np.array_equal(c, a)
    assert c.sum() == a.sum()  # the bytes are 0/1: a bool view counts what the mask holds


def test_counts_as_str_bytes_and_uncompressed_agree():
    a = box(16, 16, 4, 9, 2, 12)
    m = Mask.from_array(a)
    as_str = Mask.from_coco({"size": [16, 16], "counts": m.rle["counts"].decode()})
    as_bytes = Mask.from_coco({"size": [16, 16], "counts": m.rle["counts"]})
    # uncompressed: column-major runs starting with background
    flat = a.flatten(order="F").astype(int)
    runs, cur, n = [], 0, 0
    for v in flat:
        if v == cur:
            n += 1
        else:
            runs.append(n)
            cur, n = v, 1
    runs.append(n)
    uncompressed = Mask.from_coco({"size": [16, 16], "counts": runs})
    assert as_str == as_bytes == uncompressed == m


def test_polygon_matches_pycocotools():
    poly = [[2.0, 2.0, 12.0, 2.0, 12.0, 9.0, 2.0, 9.0]]
    m = Mask.from_coco(poly, 20, 20)
    ref = mask_utils.merge(mask_utils.frPyObjects(poly, 20, 20))
    assert m.area == int(mask_utils.area(ref))
    assert m.area > 0


def test_png_nonzero_is_foreground(tmp_path):
    img = np.zeros((10, 12), np.uint8)
    img[1:3, 1:4] = 255
    img[5, 5] = 1  # any non-zero value counts
    p = tmp_path / "m.png"
    cv2.imwrite(str(p), img)
    assert Mask.from_png(p).area == 7


def test_png_errors_name_the_file(tmp_path):
    with pytest.raises(DataFormatError, match="not found"):
        Mask.from_png(tmp_path / "nope.png")
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not a png")
    with pytest.raises(DataFormatError, match="bad.png"):
        Mask.from_png(bad)


@pytest.mark.parametrize(
    "seg, msg",
    [
        ({"size": [4, 4], "counts": "zz!!"}, "outside the RLE alphabet"),
        ({"size": [3, 5], "counts": "\u00e9"}, "outside the RLE alphabet"),  # not read as '?' = 15
        ({"size": [4, 4], "counts": "0"}, "cover 0 pixels"),
        ({"size": [10, 10], "counts": "f037000`1x"}, ""),  # trailing junk
        ({"size": [4, 4], "counts": [3, 20]}, "sum to 23"),
        ({"size": [4], "counts": "0"}, "size"),
        ({"size": [4, 4], "counts": 5}, "counts"),
        ("not a mask", "unsupported"),
        ([[1, 2, 3]], "polygons"),
    ],
)
def test_corrupt_input_is_rejected_with_location(seg, msg):
    with pytest.raises(DataFormatError) as exc:
        Mask.from_coco(seg, 4, 4, path="preds.json", record=7)
    text = str(exc.value)
    assert "preds.json" in text and "record 7" in text and "segmentation" in text
    assert msg in text


def test_rle_validator_accepts_every_real_encoding():
    rng = np.random.default_rng(0)
    for _ in range(50):
        h, w = rng.integers(1, 60, size=2)
        a = rng.random((h, w)) < rng.random()
        rle = mask_utils.encode(np.asfortranarray(a.astype(np.uint8)))
        assert rle_counts_problem(rle["counts"], int(h * w)) is None


def test_iou_and_intersection_on_rle():
    a = Mask.from_array(box(10, 10, 0, 4, 0, 5))  # 20 px
    b = Mask.from_array(box(10, 10, 2, 6, 0, 5))  # 20 px, overlap 10
    assert iou(a, b) == pytest.approx(10 / 30)
    assert intersection_area(a, b) == 10
    assert union_area(a, b) == 30
    assert intersection_matrix([a, b], [b])[:, 0].tolist() == [10, 20]
    assert union_all([a, b], 10, 10).area == 30
    assert intersect_all([a, b]).area == 10


def test_empty_masks_iou_zero_and_empty_lists():
    e = Mask.empty(8, 8)
    assert e.area == 0
    assert iou(e, e) == 0.0
    assert iou_matrix([], [e]).shape == (0, 1)
    assert union_all([], 8, 8).area == 0


def test_resize_nearest_matches_pil_nearest():
    from PIL import Image

    rng = np.random.default_rng(3)
    a = rng.random((37, 23)) < 0.4
    m = Mask.from_array(a)
    out = resize_nearest(m, 64, 50)
    ref = np.array(Image.fromarray(a.astype(np.uint8) * 255).resize((50, 64), Image.NEAREST)) > 0
    assert out.shape == (64, 50)
    assert np.array_equal(out.to_array(), ref)
    assert resize_nearest(m, 37, 23) is m


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.bool_, (12, 9)),
    arrays(np.bool_, (12, 9)),
)
def test_properties_iou_symmetric_and_exact_intersection(a, b):
    ma, mb = Mask.from_array(a), Mask.from_array(b)
    assert iou(ma, mb) == iou(mb, ma)
    inter = int((a & b).sum())
    union = int((a | b).sum())
    assert intersection_matrix([ma], [mb])[0, 0] == inter
    assert intersection_area(ma, mb) == inter
    assert union_area(ma, mb) == union
    assert iou(ma, mb) == pytest.approx(inter / union if union else 0.0)
    assert 0.0 <= iou(ma, mb) <= 1.0


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_property_validator_round_trip(h, w, seed):
    a = np.random.default_rng(seed).random((h, w)) < 0.5
    m = Mask.from_array(a)
    back = Mask.from_coco(m.to_coco())
    assert np.array_equal(back.to_array(), a)


def _spy_iou(monkeypatch) -> list[tuple[int, int]]:
    """(prediction rows, ground-truth columns) of every pycocotools IoU call (the real call made)."""
    from pycocotools import mask as mask_utils

    calls: list[tuple[int, int]] = []
    iou = mask_utils.iou
    monkeypatch.setattr(mask_utils, "iou", lambda d, g, c: calls.append((len(d), len(g))) or iou(d, g, c))
    return calls


def _whole(preds, gts) -> np.ndarray:
    from pycocotools import mask as mask_utils

    return np.asarray(mask_utils.iou([p.rle for p in preds], [g.rle for g in gts], [0] * len(gts))
                      ).reshape(len(preds), len(gts))


@pytest.mark.parametrize("bound", [None, 600_000])
def test_iou_matrix_takes_one_pycocotools_call_for_a_score_time_matrix(monkeypatch, bound):
    """A matrix is one call outside the window (no bound), and one call within the window's bound
    when its work is ordinary (asking 4 rows at a time re-parsed the ground truth at every call:
    the scorer was 4-9x slower), with pycocotools' own matrix."""
    from masklens.core import masks

    rng = np.random.default_rng(3)
    preds = [Mask.from_array(rng.random((30, 40)) > 0.6) for _ in range(11)]
    gts = [Mask.from_array(rng.random((30, 40)) > 0.5) for _ in range(3)]
    whole = _whole(preds, gts)
    rows = _spy_iou(monkeypatch)
    with masks.iou_call_bound(bound):
        got = masks.iou_matrix(preds, gts)
    assert rows == [(11, 3)]
    assert got.shape == (11, 3) and np.array_equal(got, whole)


@pytest.mark.parametrize("n_preds, n_gts", [(12, 3), (2, 6)])
def test_iou_matrix_bounds_the_work_of_each_pycocotools_call(monkeypatch, n_preds, n_gts):
    """pycocotools holds the GIL for a whole IoU call: masks with long RLEs (a many-mask result
    at full size, speckled as a random-weight model's) are compared in blocks of rows and of
    columns, each within the bound (the window's jobs compute under one), with the same matrix,
    whether the bound is given to the call or in force in the thread."""
    from masklens.core import masks
    from masklens.core.masks import iou_blocks

    bound = 600_000
    rng = np.random.default_rng(5)
    preds = [Mask.from_array(rng.random((300, 400)) > 0.5) for _ in range(n_preds)]
    gts = [Mask.from_array(rng.random((300, 400)) > 0.5) for _ in range(n_gts)]
    whole = _whole(preds, gts)
    calls = _spy_iou(monkeypatch)
    got = masks.iou_matrix(preds, gts, call_work=bound)
    assert np.array_equal(got, whole) and len(calls) > 1
    with masks.iou_call_bound(bound):
        assert np.array_equal(masks.iou_matrix(preds, gts), whole)
    assert calls[len(calls) // 2:] == calls[:len(calls) // 2]  # the same blocks both ways
    calls = calls[:len(calls) // 2]
    blocks = iou_blocks([p.rle for p in preds], [g.rle for g in gts], bound)
    assert [(r.stop - r.start, c.stop - c.start) for r, c in blocks] == calls
    covered = np.zeros((n_preds, n_gts), int)
    for rows, cols in blocks:  # every pair once; every call within the bound (or one pair alone)
        covered[rows, cols] += 1
        p_len = [len(p.rle["counts"]) for p in preds[rows]]
        g_len = [len(g.rle["counts"]) for g in gts[cols]]
        work = len(g_len) * sum(p_len) + len(p_len) * sum(g_len)
        assert work <= bound or len(p_len) * len(g_len) == 1
    assert (covered == 1).all()
    if n_gts > 3:
        assert any(c.stop - c.start < n_gts for _, c in blocks)  # the columns split too


def test_an_iou_call_bound_holds_only_in_the_thread_that_set_it():
    import threading

    from masklens.core import masks

    seen: list[int | None] = []
    with masks.iou_call_bound(1000):
        other = threading.Thread(target=lambda: seen.append(masks.current_iou_call_work()))
        other.start()
        other.join()
        assert masks.current_iou_call_work() == 1000
    assert seen == [None] and masks.current_iou_call_work() is None
