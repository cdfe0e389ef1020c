"""Scoring parameters are numbers: a string ("0.7", as a config or a notebook may hand over) or a
bool is refused in one line naming the parameter, never read as a number."""

from __future__ import annotations

import numpy as np
import pytest

import masklens.core as ml
from masklens.core.errors import MasklensError
from masklens.core.kinds.demo import demo_files


@pytest.mark.parametrize("value", ["0.7", True, b"0.7", None.__class__])
def test_a_parameter_that_is_no_number_is_refused(value):
    with pytest.raises(MasklensError, match=r"score_threshold= must be a number, got"):
        ml.score("cafe", **demo_files("cafe"), score_threshold=value)


@pytest.mark.parametrize("value", [0.7, 1, np.float32(0.7), np.int64(0)])
def test_numbers_of_any_numeric_type_are_taken(value):
    assert ml.score("cafe", **demo_files("cafe"), score_threshold=value).params["score_threshold"] == float(value)
