"""The backends' masks are RLE-encoded in one pycocotools call per chunk: the
same masks as encoding each array on its own, whichever side makes the column-major copy."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from masklens.core.masks import Mask  # noqa: E402
from masklens.core.models.torch_runtime import encode_masks  # noqa: E402


def _blobs(n: int, height: int, width: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(0)
    low = torch.nn.functional.avg_pool2d(torch.randn(n, 1, 24, 24, generator=gen), 5, stride=1, padding=2)
    up = torch.nn.functional.interpolate(low, size=(height, width), mode="bilinear", align_corners=False)
    return up[:, 0] > 0


@pytest.mark.parametrize("on_device", [False, True])
@pytest.mark.parametrize("shape", [(5, 120, 180), (3, 37, 1), (2, 1, 53)])
def test_batched_encoding_equals_one_by_one(shape, on_device):
    binary = _blobs(*shape)
    binary[0] = True  # a full mask
    if shape[0] > 2:
        binary[1] = False  # an empty one
    got = encode_masks(binary, transpose_on_device=on_device)
    want = [Mask.from_array(b) for b in binary.numpy()]
    assert got == want
    assert [m.shape for m in got] == [shape[1:]] * shape[0]
    assert np.array_equal(np.stack([m.to_array() for m in got]), binary.numpy())


def test_no_masks():
    assert encode_masks(torch.zeros((0, 30, 40), dtype=torch.bool)) == []


def test_each_pycocotools_call_encodes_one_mask(monkeypatch):
    """pycocotools holds the GIL for a whole call: one mask per call keeps the window's waits short
    and gives the same masks."""
    from pycocotools import mask as mask_utils

    sizes = []
    encode = mask_utils.encode
    monkeypatch.setattr(mask_utils, "encode", lambda columns: sizes.append(columns.shape[-1]) or encode(columns))
    binary = _blobs(6, 90, 70)
    got = encode_masks(binary)
    assert sizes == [1] * 6
    assert got == [Mask.from_array(b) for b in binary.numpy()]
