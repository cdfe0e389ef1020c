"""Fast start: the top-level help imports no command module and no numpy,
`score KIND` builds only that kind's parser (no other kind, no scipy.optimize), the lazily
built parsers read the command line exactly as the full one, and `score --out` writes
compact JSON (``--pretty``: indented) with the same content."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from masklens.core.cli import build_parser, main

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


def _modules_after(argv: list[str]) -> set[str]:
    code = (
        "import sys\nfrom masklens.core.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_top_level_help_imports_no_command_and_no_numpy() -> None:
    mods = _modules_after(["--help"])
    assert "numpy" not in mods
    commands = {m for m in mods if m.startswith("masklens.core.cli.")} - {"masklens.core.cli.help_text"}
    assert not commands, commands


def test_score_kind_imports_only_that_kind() -> None:
    mods = _modules_after(["score", "pcs", "--help"])
    assert "masklens.core.kinds.pcs.kind" in mods
    others = {"cafe", "hallusegbench", "cgebench", "r2sm", "ovs"}
    assert not {f"masklens.core.kinds.{k}.kind" for k in others} & mods
    assert "scipy.optimize" not in mods
    assert not {"masklens.core.cli.predict", "masklens.core.cli.report", "torch"} & mods


def test_lazy_help_listing_equals_full_parser() -> None:
    assert build_parser(["--help"]).format_help() == build_parser().format_help()


@pytest.mark.parametrize(
    "argv",
    [["score", "pcs", "--gt", "a.json", "--gt", "b.json", "--pred", "p.json", "--score-threshold", "0.3"],
     ["score", "cafe", "--ann", "a.json", "--pred", "p.json", "--out", "o.json", "--pretty"],
     ["report", "cafe", "--ann", "a.json", "--pred", "p.json", "--out", "o.html"]],
)  # fmt: skip
def test_lazy_parser_reads_argv_as_the_full_one(argv) -> None:
    lazy = vars(build_parser(argv).parse_args(argv))
    full = vars(build_parser().parse_args(argv))
    assert lazy.keys() == full.keys()
    assert {k: v for k, v in lazy.items() if k != "func"} == {
        k: v for k, v in full.items() if k != "func"
    }


def test_unknown_kind_still_lists_every_kind(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["score", "nosuchkind"])
    err = capsys.readouterr().err
    for k in ("cafe", "pcs", "ovs"):
        assert k in err


def test_score_out_compact_by_default_and_pretty_on_request(tmp_path) -> None:
    pcs = DEMO / "pcs"
    args = ["score", "pcs", *(x for a in (1, 2, 3) for x in ("--gt", str(pcs / f"gold_annotator_{a}.json"))),
            "--pred", str(pcs / "pred_demo.json")]  # fmt: skip
    assert main([*args, "--out", str(tmp_path / "c.json")]) == 0
    assert main([*args, "--out", str(tmp_path / "p.json"), "--pretty"]) == 0
    compact = (tmp_path / "c.json").read_text()
    pretty = (tmp_path / "p.json").read_text()
    assert compact.count("\n") == 1 and pretty.count("\n") > 50
    assert json.loads(compact) == json.loads(pretty)
    assert json.loads(pretty)["samples"][0]["instances"] is not None
    assert json.loads(compact)["summary"]["all"]["N"] > 0


def test_scoring_pcs_needs_no_scipy_optimize(tmp_path) -> None:
    """The Hungarian solver is scipy's own compiled one, loaded without scipy.optimize: on
    the demo (whose overlaps are all settled without a solver) and on an entry whose
    matching needs it (P1 overlaps G1 and G2, P2 overlaps G1: not a star, see pcs_bulk)."""
    pcs = DEMO / "pcs"
    argv = ["score", "pcs", *(x for a in (1, 2, 3) for x in ("--gt", str(pcs / f"gold_annotator_{a}.json"))),
            "--pred", str(pcs / "pred_demo.json"), "--out", str(tmp_path / "o.json")]  # fmt: skip
    mods = _modules_after(argv)
    assert "scipy.optimize" not in mods
    assert json.loads((tmp_path / "o.json").read_text())["summary"]["all"]["N"] > 0

    def row(cols: range) -> dict:
        from masklens.core.masks import Mask

        return Mask.from_array([[c in cols for c in range(12)]]).to_coco()

    gt = {"images": [{"id": 1, "height": 1, "width": 12, "text_input": "x"}], "categories": [{"id": 1}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "segmentation": row(range(0, 4))},
                          {"id": 2, "image_id": 1, "category_id": 1, "segmentation": row(range(4, 9))}]}
    preds = [{"image_id": 1, "category_id": 1, "segmentation": row(range(1, 6)), "score": 0.9},
             {"image_id": 1, "category_id": 1, "segmentation": row(range(0, 1)), "score": 0.9}]  # fmt: skip
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "pred.json").write_text(json.dumps(preds))
    mods = _modules_after(["score", "pcs", "--gt", str(tmp_path / "gt.json"), "--pred",
                           str(tmp_path / "pred.json"), "--out", str(tmp_path / "o.json")])  # fmt: skip
    assert "scipy.optimize" in mods  # an ambiguous matching: the public solver, imported when needed
    assert json.loads((tmp_path / "o.json").read_text())["samples"][0]["TP@0.5"] == 1


def test_a_broken_kind_named_on_the_command_line_warns(capsys, monkeypatch) -> None:
    from masklens.core.scoring import contract as scoring

    monkeypatch.setattr(scoring, "KINDS", scoring.KINDS.copy())
    scoring.register_kind("brokenkind", "masklens.core.no_such_module_here")
    with pytest.raises(SystemExit):
        main(["score", "brokenkind", "--ann", "a.json"])
    err = capsys.readouterr().err
    assert "benchmark kind 'brokenkind' unavailable" in err
    assert "invalid choice" in err
