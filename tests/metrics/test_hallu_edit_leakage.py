"""Edit leakage of HalluSegBench pairs, on generated pairs whose leakage is known by construction."""

from __future__ import annotations

import numpy as np
import pytest
from hallu_pairs import pair, write_pairs

from masklens.core.kinds.hallusegbench.leakage import (
    CHANGE_THRESHOLD,
    annotate,
    changed_pixels,
    edit_leakage,
    sample_leakage,
)


@pytest.mark.parametrize("leak, inside", [(0, 500), (100, 300), (250, 250), (37, 1)])
def test_known_leakage(leak, inside):
    f, cf, m_f, m_cf = pair(leak + inside, leak=leak, inside=inside, noise=CHANGE_THRESHOLD)
    got = edit_leakage(f, cf, m_f, m_cf)
    assert got["edit_changed_px"] == leak + inside
    assert got["edit_leak_px"] == leak
    assert got["edit_leakage"] == pytest.approx(leak / (leak + inside))


def test_both_masks_make_the_edited_region():
    f, cf, m_f, m_cf = pair(3, leak=0, inside=700)  # changes in M′_c′ beyond M_c too
    assert edit_leakage(f, cf, m_f, m_cf)["edit_leakage"] == 0.0
    assert edit_leakage(f, cf, m_f, np.zeros_like(m_cf))["edit_leak_px"] > 0  # one mask is not enough


def test_threshold_is_strict_and_on_the_largest_channel_difference():
    f = np.full((4, 4, 3), 100, np.uint8)
    cf = f.copy()
    cf[0, 0, 2] = 100 + CHANGE_THRESHOLD  # equal to the threshold: unchanged
    cf[1, 1, 1] = 100 + CHANGE_THRESHOLD + 1  # just above, in green only
    cf[2, 2] = (100 - CHANGE_THRESHOLD - 1, 100, 100)  # a decrease counts too
    ch = changed_pixels(f, cf)
    assert ch.sum() == 2 and ch[1, 1] and ch[2, 2] and not ch[0, 0]
    cf4 = np.dstack([cf, np.zeros((4, 4), np.uint8)])  # alpha is ignored
    assert np.array_equal(changed_pixels(np.dstack([f, np.full((4, 4), 255, np.uint8)]), cf4), ch)


def test_nothing_changed_is_null_and_other_sizes_are_resized():
    f = np.zeros((10, 10, 3), np.uint8)
    got = edit_leakage(f, f, np.zeros((10, 10), bool), np.zeros((10, 10), bool))
    assert got == {"edit_leakage": None, "edit_leak_px": 0, "edit_changed_px": 0}
    cf = np.zeros((20, 20, 3), np.uint8)
    cf[:, 10:] = 255  # right half of I′ at twice the size
    m = np.zeros((5, 5), bool)
    m[:, 3:] = True  # masks at half the size: the right 2/5 (resized nearest)
    got = edit_leakage(f, cf, m, m)
    assert got["edit_changed_px"] == 50 and got["edit_leak_px"] == 10  # column 5 outside the mask


def test_readout_carries_leakage_only_once_measured(tmp_path):
    import cv2

    from masklens.core.kinds.hallusegbench.kind import KIND
    from masklens.core.schema import PredictionSet

    bench = KIND.load_benchmark(data=write_pairs(tmp_path, [0, 40, 120])[0])
    preds = PredictionSet()
    params = KIND.default_params()

    def readouts():
        ov = [KIND.sample_overlaps(s, preds) for s in bench.samples]
        return KIND.sample_readouts(bench.samples, ov, params)

    assert all("edit_leakage" not in r for r in readouts())  # the scorer alone: no figure
    figures = {s.id: sample_leakage(s, lambda k, s=s: cv2.imread(str(s.images[k].path))[:, :, ::-1])
               for s in bench.samples}
    assert annotate(bench.samples, figures) == 3
    got = [r["edit_leakage"] for r in readouts()]
    assert got == pytest.approx([0.0, 40 / 240, 120 / 320])
    assert [r["edit_leak_px"] for r in readouts()] == [0, 40, 120]
    assert sample_leakage(bench.samples[0], lambda k: None) is None  # a missing image: unknown
