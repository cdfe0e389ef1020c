"""`masklens.core.kinds.demo`: arguments for the bundled demo."""

from __future__ import annotations

import pytest

from masklens.core.errors import MasklensError
from masklens.core.kinds import demo


def test_argv_points_at_existing_files():
    for kind in demo.demo_kinds():
        argv = demo.demo_argv(kind)
        paths = [argv[i + 1] for i, a in enumerate(argv) if a.startswith("--")]
        assert paths and all(demo.DEMO_DIR.joinpath(p).exists() for p in paths), kind
        assert not any(a in demo.demo_argv(kind, with_predictions=False) for a in ("--pred", "--pred-dir"))


def test_unknown_kind_is_a_clear_error():
    with pytest.raises(MasklensError, match="no bundled demo for 'nope'"):
        demo.demo_argv("nope")


def test_namespace_has_params_and_no_predictions_when_asked():
    ns = demo.demo_namespace("cafe", with_predictions=False)
    assert ns.kind == "cafe" and ns.out is None
    assert ns.pred is None and ns.ann.endswith("cafe/ann.json")
    assert ns.score_threshold is None and ns.iou_threshold is None  # = the kind's defaults


def test_namespace_without_the_kind_module(monkeypatch):
    import masklens.core.scoring.contract as scoring

    def missing(name):
        raise ModuleNotFoundError(name)

    monkeypatch.setattr(scoring, "get_kind", missing)
    ns = demo.demo_namespace("pcs")
    assert len(ns.gt) == 3 and ns.pred.endswith("pred_demo.json")
    ns = demo.demo_namespace("hallusegbench")
    assert ns.pred_dir.endswith("pred_demo") and ns.root.endswith("hallusegbench")


def test_make_demo_cli(tmp_path, make_demo, capsys):
    assert make_demo.main(["--out", str(tmp_path), "--only", "r2sm"]) == 0
    assert (tmp_path / "r2sm" / "ann.json").exists() and not (tmp_path / "cafe").exists()
    assert "wrote" in capsys.readouterr().out
