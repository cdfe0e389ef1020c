"""The committed demo predictions are exactly what `masklens predict KIND --model demo` produces."""

from __future__ import annotations

import json

import pytest

from masklens.core.kinds.demo import DEMO_DIR, demo_argv, demo_kinds
from masklens.core.masks import Mask


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MASKLENS_CACHE_DIR", str(tmp_path / "cache"))


def _predict(kind: str, out, *extra: str) -> None:
    """The documented command (docs/demo.md, docs/models.md) literally: no --no-cache, so the
    prediction cache (this test's own) takes part as for a user."""
    from masklens.core.cli import main

    gt_args = demo_argv(kind, with_predictions=False)
    rc = main(["predict", kind, "--model", "demo", *gt_args, "--quiet", *extra, "--out", str(out)])
    assert rc == 0


def _records(path, key: str) -> list[tuple]:
    rows = json.loads(path.read_text())
    return sorted((r[key], r.get("level", -1), round(r["score"], 4), r["segmentation"]["counts"])
                  for r in rows)


SCORED = [("cafe", "image_id"), ("pcs", "image_id"), ("cgebench", "image_id"), ("r2sm", "query_id")]


def test_every_demo_prediction_file_is_checked():
    """Each kind with a shipped prediction file is compared below (a new kind is not skipped)."""
    shipped = {k for k in demo_kinds() if any((DEMO_DIR / k).glob("pred*"))}
    assert shipped == {k for k, _ in SCORED} | {"hallusegbench", "ovs"}


@pytest.mark.parametrize(("kind", "key"), SCORED)
def test_plain_predict_command_writes_the_shipped_predictions(kind, key, tmp_path):
    """`masklens predict KIND --model demo …` with no --score-threshold keeps instances down to the
    demo model's floor (0.05), as the shipped files do (keeping only those >= its 0.5 would score
    CAFE's TA_FN_paper/UA_FN 0/1 where the shipped file scores 1/0); the record lists are equal,
    row for row."""
    out = tmp_path / "pred.json"
    _predict(kind, out)
    shipped = json.loads((DEMO_DIR / kind / "pred_demo.json").read_text())
    assert json.loads(out.read_text()) == shipped
    assert _records(out, key) == _records(DEMO_DIR / kind / "pred_demo.json", key)
    if kind == "cafe":
        assert len(shipped) == 41


@pytest.mark.parametrize(("kind", "key"), [("cafe", "image_id"), ("r2sm", "query_id")])
def test_explicit_floor_is_the_default(kind, key, tmp_path):
    """--score-threshold 0.05 (the old way to get the shipped file) writes the same file."""
    _predict(kind, tmp_path / "a.json")
    from masklens.core.inference.prediction_io import PREDICTION_SCORE_FLOOR

    _predict(kind, tmp_path / "b.json", "--score-threshold", str(PREDICTION_SCORE_FLOOR))
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_committed_hallusegbench_masks_match_the_predict_command(tmp_path):
    out = tmp_path / "pred"
    _predict("hallusegbench", out)  # plain masks: the demo model's own 0.5, as the generator's PNGs
    committed = sorted((DEMO_DIR / "hallusegbench" / "pred_demo").rglob("*.png"))
    items = json.loads((DEMO_DIR / "hallusegbench" / "data.json").read_text())
    assert len(committed) == 4 * len(items)
    for png in committed:
        rel = png.relative_to(DEMO_DIR / "hallusegbench" / "pred_demo")
        assert Mask.from_png(out / rel) == Mask.from_png(png), rel
    written = sorted(p.relative_to(out) for p in out.rglob("*.png"))
    assert written == [p.relative_to(DEMO_DIR / "hallusegbench" / "pred_demo") for p in committed]


def test_committed_ovs_predictions_match_the_predict_command(tmp_path):
    out = tmp_path / "pred.json"
    _predict("ovs", out)
    assert json.loads(out.read_text()) == json.loads((DEMO_DIR / "ovs" / "pred.json").read_text())


@pytest.mark.parametrize(("kind", "key"), [("cafe", "image_id"), ("r2sm", "query_id")])
def test_model_s_calibrated_threshold_keeps_the_shipped_instances_above_it(kind, key, tmp_path):
    """--score-threshold 0.5 (the demo model's calibrated value) keeps exactly the shipped
    instances scored >= 0.5 (30 of 41 on CAFE)."""
    from masklens.core.models.demo import INFO

    out = tmp_path / "pred.json"
    _predict(kind, out, "--score-threshold", str(INFO.default_score_threshold))
    committed = [r for r in _records(DEMO_DIR / kind / "pred_demo.json", key)
                 if r[2] >= INFO.default_score_threshold]
    assert _records(out, key) == committed
    if kind == "cafe":
        assert (len(committed), len(_records(DEMO_DIR / kind / "pred_demo.json", key))) == (30, 41)


def test_api_predict_keeps_the_floor_too(tmp_path):
    """masklens.core.predict("cafe", "demo", …) gives the shipped records, as the CLI."""
    import masklens.core as ml

    args = demo_argv("cafe", with_predictions=False)
    files = dict(zip((a.lstrip("-") for a in args[::2]), args[1::2], strict=True))
    out = tmp_path / "pred.json"
    ml.predict("cafe", "demo", no_cache=True, out=out, **files)
    assert _records(out, "image_id") == _records(DEMO_DIR / "cafe" / "pred_demo.json", "image_id")


@pytest.mark.parametrize(("kind", "backend", "expected"), [
    ("cafe", "demo", 0.05), ("pcs", "sam3", 0.05), ("r2sm", "owlv2-sam2", 0.05),
    ("hallusegbench", "demo", None),  # plain mask PNGs: the model's own threshold decides
    ("cafe", "clipseg", None),  # its mask threshold follows the score threshold
    ("cafe", "replay", None),  # its own default (0) is already below the floor
])
def test_which_runs_get_the_floor(kind, backend, expected):
    from masklens.core.inference.prediction_io import default_output_threshold
    from masklens.core.scoring.contract import get_kind

    assert default_output_threshold(get_kind(kind), backend) == expected


def test_a_plugin_backend_without_a_score_threshold_option_keeps_its_own(monkeypatch):
    """A registered backend whose factory takes no score_threshold is not handed one."""
    from masklens.core.inference.prediction_io import default_output_threshold
    from masklens.core.models import registry
    from masklens.core.models.base import BackendInfo
    from masklens.core.scoring.contract import get_kind

    info = BackendInfo("fixed-plugin", "plugin", None, 0.5, needs_weights=False)

    def fixed(*, device=None):  # noqa: ANN202 - a plugin's factory
        raise AssertionError("not created here")

    def flexible(**options):  # noqa: ANN202
        raise AssertionError("not created here")

    monkeypatch.setattr(registry, "BACKENDS", registry.BACKENDS.copy())
    registry.register_backend(info, fixed)
    assert default_output_threshold(get_kind("cafe"), "fixed-plugin") is None
    registry.register_backend(info, flexible)
    assert default_output_threshold(get_kind("cafe"), "fixed-plugin") == 0.05
