"""The schema's mutable per-entry classes are slotted (no instance ``__dict__``: a 100k-entry
benchmark holds a million of them) and still support what their callers do with them: pickling
(also through Ray's cloudpickle), ``dataclasses.replace``, copies, equality; the frozen ones
keep their ``__dict__`` and their FrozenInstanceError."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest

from masklens.core.masks import Mask
from masklens.core.schema import (
    GroundTruth,
    ImageRef,
    Instance,
    Prediction,
    Prompt,
    Role,
    Sample,
)

SLOTTED = (GroundTruth, Sample, Instance, Prediction)


def _mask(seed: int) -> Mask:
    rng = np.random.default_rng(seed)
    return Mask.from_array(rng.random((12, 9)) > 0.5)


def _sample() -> tuple[Sample, Prediction]:
    gt = GroundTruth("gt0", [_mask(1), _mask(2)], 12, 9, label="cat", crowd=[False, True],
                     meta={"file": "/x/gt0.json", "category_ids": [3, 3]})  # fmt: skip
    prompt = Prompt("7", "cat", Role.POSITIVE, "image", "gt0", source_id=7, meta={"exhaustive": True})
    sample = Sample("7", {"image": ImageRef("image", None, 12, 9, 7)}, {"gt0": gt}, [prompt],
                    group="all", meta={"exhaustive": True, "file_name": "a.jpg"})  # fmt: skip
    pred = Prediction("7", [Instance(_mask(3), 0.75, None, 3), Instance(_mask(4), 0.5)])
    return sample, pred


@pytest.mark.parametrize("cls", SLOTTED, ids=lambda c: c.__name__)
def test_per_entry_classes_have_no_instance_dict(cls: type) -> None:
    sample, pred = _sample()
    obj = {GroundTruth: sample.gts["gt0"], Sample: sample, Instance: pred.instances[0], Prediction: pred}[cls]
    assert not hasattr(obj, "__dict__")
    with pytest.raises(AttributeError):
        obj.not_a_field = 1  # type: ignore[attr-defined]


def test_frozen_classes_keep_their_dict() -> None:
    sample, _ = _sample()
    prompt = sample.prompts[0]
    assert type(prompt)(**{**prompt.__dict__, "meta": {}}) == dataclasses.replace(prompt, meta={})
    assert vars(sample.images["image"])["height"] == 12
    for frozen in (prompt, sample.images["image"]):
        with pytest.raises(dataclasses.FrozenInstanceError):
            frozen.not_a_field = 1  # type: ignore[attr-defined]


def _equal(a: Sample, b: Sample) -> None:
    assert a == b
    assert a.gts["gt0"].masks == b.gts["gt0"].masks
    assert a.prompts[0].role is Role.POSITIVE and b.prompts[0].role is Role.POSITIVE


def test_samples_and_predictions_round_trip_through_pickle() -> None:
    sample, pred = _sample()
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        s2, p2 = pickle.loads(pickle.dumps((sample, pred), protocol=protocol))
        _equal(s2, sample)
        assert p2 == pred and p2.max_score == 0.75
        assert s2.gts["gt0"].union().area == sample.gts["gt0"].union().area


def test_samples_round_trip_through_ray_cloudpickle() -> None:
    cloudpickle = pytest.importorskip("ray.cloudpickle")
    sample, pred = _sample()
    s2, p2 = cloudpickle.loads(cloudpickle.dumps((sample, pred)))
    _equal(s2, sample)
    assert p2 == pred


def test_replace_copy_and_frozen_assignment() -> None:
    sample, pred = _sample()
    prompt = dataclasses.replace(sample.prompts[0], text="dog", meta={**sample.prompts[0].meta, "typed": True})
    assert (prompt.text, prompt.id, prompt.meta) == ("dog", "7", {"exhaustive": True, "typed": True})
    other = dataclasses.replace(sample, prompts=[prompt])
    assert other.prompts[0].text == "dog" and sample.prompts[0].text == "cat"
    assert dataclasses.replace(pred, prompt_id="8").instances is pred.instances
    deep = copy.deepcopy(sample)
    _equal(deep, sample)
    assert deep.gts["gt0"].masks is not sample.gts["gt0"].masks
    shallow = copy.copy(sample)
    assert shallow == sample and shallow.gts is sample.gts
    with pytest.raises(dataclasses.FrozenInstanceError):
        sample.prompts[0].text = "dog"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        sample.images["image"].height = 3  # type: ignore[misc]
    sample.meta["orphan_entries"] = []  # mutable classes keep their fields assignable
    sample.group = "SM"
    assert sample.group == "SM" and "orphan_entries" in sample.meta
    assert hash(sample.images["image"]) == hash(copy.deepcopy(sample.images["image"]))
