"""OWLv2's image pre-processing is interruptible and gives the processor's own pixels.

transformers' Owlv2ImageProcessor blurs the padded image in one conv2d before downscaling: seconds
on a loaded CPU at 1800×1200, and no torch module, so Cancel waited for it (2.31 s measured with
the real-size OWLv2). masklens computes the same pixels with the blur in strips and the thread's
cancel check between them.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformers")

from masklens.core.errors import Cancelled  # noqa: E402
from masklens.core.models.base import SegmentRequest  # noqa: E402
from masklens.core.models.interrupt import cancel_check  # noqa: E402
from masklens.core.models.owlv2_pixels import pixel_values  # noqa: E402
from masklens.core.models.registry import create_segmenter  # noqa: E402


def _photo(height: int, width: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    img[height // 4: height // 2, width // 3: width // 2] = (220, 30, 30)
    return img


@pytest.mark.slow  # the transformers processor on photo-sized images: seconds
@pytest.mark.parametrize("size", [960, 64])
@pytest.mark.parametrize("shape", [(1200, 1800), (900, 350), (37, 53)])
def test_the_pixels_are_the_processors_own(size, shape):
    import torch
    from transformers import Owlv2ImageProcessor

    proc = Owlv2ImageProcessor(size={"height": size, "width": size})
    image = _photo(*shape)
    checks = []
    got = pixel_values(proc, image, lambda: checks.append(1))
    ref = proc(images=image, return_tensors="pt")["pixel_values"]
    assert got.dtype == ref.dtype and got.shape == ref.shape == (1, 3, size, size)
    assert torch.equal(got, ref)
    if max(shape) > size:  # a blur ran, in strips, with a check before each
        assert len(checks) >= max(shape) // 64


def test_a_processor_it_does_not_reproduce_is_left_to_itself():
    from transformers import Owlv2ImageProcessor

    assert pixel_values(Owlv2ImageProcessor(do_pad=False), _photo(40, 60), None) is None
    assert pixel_values(object(), _photo(40, 60), None) is None


@pytest.mark.slow
def test_cancel_stops_owlv2_during_its_image_preprocessing(tiny_owlv2, tiny_sam2_hf):
    """Cancel raised during the pre-processing of a 900×1350 image (tiny OWLv2: 64 px, so a wide
    blur) stops the prompt before OWLv2's vision model starts; nothing is kept; the next run works."""
    opts = dict(weights=str(tiny_owlv2), sam2_weights=str(tiny_sam2_hf), device="cpu", score_threshold=0.0)
    seg = create_segmenter("owlv2-sam2", **opts)
    seg.ensure_loaded()
    started: list[int] = []
    seg.detector.owlv2.vision_model.register_forward_pre_hook(lambda *_: started.append(1))
    image = _photo(900, 1350)
    seen: list[bool] = []  # at each check: had the vision model started?

    def check() -> None:  # the user presses Cancel a few checks in
        seen.append(bool(started))
        if len(seen) >= 3:
            raise Cancelled()

    with cancel_check(check), pytest.raises(Cancelled):
        seg.segment(image, SegmentRequest("red square"))
    assert seen == [False, False, False], "Cancel was first looked at inside the model, not the pre-processing"
    assert started == [] and seg.encodings.stats.entries == 0
    again = seg.segment(image, SegmentRequest("red square"))
    fresh = create_segmenter("owlv2-sam2", **opts).segment(image, SegmentRequest("red square"))
    assert again.scores == fresh.scores and len(again.masks) == len(fresh.masks)
