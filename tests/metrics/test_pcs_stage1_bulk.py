"""``PcsKind.all_overlaps`` (every entry's IoUs in few pycocotools calls, best IoUs in one
reduction) equals :func:`entry_overlaps` entry by entry: the same scores, matching order, IoU
matrix (bit for bit), instance counts and best IoUs — with crowd instances, several categories
(SAM 3's order), predictions of another size (resized), empty entries, entries without a
prediction entry and 1–3 annotators, real RLE masks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from masklens.core.kinds.common.cgf1.io import categories_of, instances_of
from masklens.core.kinds.pcs.kind import KIND
from masklens.core.kinds.pcs.stage1 import entry_overlaps
from masklens.core.masks import Mask
from masklens.core.schema import (
    GroundTruth,
    ImageRef,
    Instance,
    Prediction,
    PredictionSet,
    Prompt,
    Role,
    Sample,
)

H, W = 12, 10


@st.composite
def masks(draw, h: int = H, w: int = W) -> Mask:
    """A box (maybe empty) of a few shapes: overlaps of every kind, ties and zeros included."""
    y0, x0 = draw(st.integers(0, h - 1)), draw(st.integers(0, w - 1))
    y1, x1 = draw(st.integers(y0, h)), draw(st.integers(x0, w))
    arr = np.zeros((h, w), dtype=np.uint8)
    arr[y0:y1, x0:x1] = 1
    return Mask.from_array(arr)


categories = st.sampled_from([1, 1, 1, 2, 3, "a", None])


@st.composite
def entry(draw, n_ann: int, index: int):
    gts = {}
    for a in range(n_ann):
        k = draw(st.integers(0, 3))
        gts[f"gt{a}"] = GroundTruth(
            f"gt{a}", [draw(masks()) for _ in range(k)], H, W,
            crowd=draw(st.lists(st.booleans(), min_size=k, max_size=k)) if draw(st.booleans()) else [False] * k,
            meta={"category_ids": draw(st.lists(categories, min_size=k, max_size=k))},
        )  # fmt: skip
    pid = f"e{index}"
    sample = Sample(
        id=pid,
        images={"image": ImageRef("image", None, H, W, index)},
        gts=gts,
        prompts=[Prompt(id=pid, text="x", role=Role.POSITIVE, image="image", gt="gt0", source_id=index)],
        meta={"exhaustive": draw(st.booleans())},
    )
    if draw(st.integers(0, 5)) == 0:
        return sample, None  # no prediction entry at all
    n = draw(st.integers(0, 4))
    instances = []
    for _ in range(n):
        small = draw(st.integers(0, 4)) == 0  # another size: resized to the entry's
        m = draw(masks(6, 5)) if small else draw(masks())
        score = draw(st.sampled_from([0.5, 0.9, 0.3]) | st.floats(0, 1))
        instances.append(Instance(m, score, None, draw(categories)))
    return sample, Prediction(pid, instances)


@st.composite
def benchmark(draw):
    n_ann = draw(st.integers(1, 3))
    n = draw(st.integers(0, 40))  # more than one IoU block of jobs
    return [draw(entry(n_ann, i)) for i in range(n)]


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(benchmark())
def test_all_overlaps_equals_entry_overlaps(entries) -> None:
    samples = [s for s, _ in entries]
    preds = PredictionSet({p.prompt_id: p for _, p in entries if p is not None})
    bulk = KIND.all_overlaps(samples, preds)
    assert len(bulk) == len(samples)
    for sample, got in zip(samples, bulk, strict=True):
        pred = preds.get(sample.id)
        gts = list(sample.gts.values())
        masks_, scores = instances_of(pred, H, W)
        ordered, ious, ngt, best = entry_overlaps(masks_, scores, gts, categories_of(pred))
        assert got.scores == scores and got.ordered_scores == ordered and got.ngt == ngt
        assert got.ious.shape == ious.shape and got.ious.tobytes() == ious.tobytes()
        assert got.best_ious == best
        assert got.missing == (pred is None)
        assert got.exhaustive == sample.meta["exhaustive"]
        one = KIND.sample_overlaps(sample, preds)  # one sample: the same computation
        assert one.ious.tobytes() == got.ious.tobytes() and one.best_ious == got.best_ious
