"""The Python API as a notebook user meets it: a typed entry point per kind
whose signature ``inspect.signature`` shows (held to the kind's own arguments and defaults),
misspelt keywords answered with the closest one and the parameters, errors naming keywords in
Python and flags on the command line, ``MasklensError`` at the top, ``py.typed``, and short
``repr`` / HTML for a ``ScoreResult``."""

from __future__ import annotations

import importlib.util
import inspect
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import masklens.core as ml
from masklens.core import api_kinds, errors
from masklens.core.cli import main
from masklens.core.files.paths import inside_root
from masklens.core.scoring.contract import ScoreResult, get_kind
from masklens.core.scoring.kind_args import file_actions

ROOT = Path(__file__).resolve().parents[2]
D = ROOT / "resources" / "demo"
DEMO = {
    "cafe": {"ann": f"{D}/cafe/ann.json", "pred": f"{D}/cafe/pred_demo.json"},
    "pcs": {"gt": [f"{D}/pcs/gold_annotator_{i}.json" for i in (1, 2, 3)], "pred": f"{D}/pcs/pred_demo.json"},
    "hallusegbench": {"data": f"{D}/hallusegbench/data.json", "pred_dir": f"{D}/hallusegbench/pred_demo"},
    "cgebench": {"ann": f"{D}/cgebench/ann.json", "pred": f"{D}/cgebench/pred_demo.json"},
    "r2sm": {"ann": f"{D}/r2sm/ann.json", "pred": f"{D}/r2sm/pred_demo.json"},
    "ovs": {"ann": f"{D}/ovs/ann.json", "pred": f"{D}/ovs/pred.json"},
}


@pytest.mark.parametrize("kind", sorted(DEMO))
def test_each_kind_s_entry_point_has_the_kind_s_real_signature(kind):
    fn = getattr(ml, f"score_{kind}")
    assert fn is api_kinds.SCORE_BY_KIND[kind]
    sig = inspect.signature(fn)
    k = get_kind(kind)
    expected = {}
    for action in file_actions(k):
        expected[action.dest] = inspect.Parameter.empty if action.required else None
    for p in k.params:
        expected[p.name] = p.default
    expected.update(out=None, pretty=False)
    assert {n: p.default for n, p in sig.parameters.items()} == expected
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in sig.parameters.values())
    hints = typing.get_type_hints(fn)  # every annotation resolves
    assert hints["return"] is ScoreResult and set(hints) == {*expected, "return"}


@pytest.mark.parametrize("kind", sorted(DEMO))
def test_each_entry_point_scores_as_score_does(kind):
    typed = getattr(ml, f"score_{kind}")(**DEMO[kind])
    assert typed.summary == ml.score(kind, **DEMO[kind]).summary


def test_a_misspelt_keyword_names_the_parameter_it_meant():
    with pytest.raises(ml.MasklensError) as err:
        ml.score("cafe", **DEMO["cafe"], score_treshold=0.3)
    text = str(err.value)
    assert "takes no argument score_treshold=" in text and "did you mean score_threshold=?" in text
    assert "score_threshold=, iou_threshold=" in text and "ann=" in text
    with pytest.raises(TypeError, match="score_treshold"):  # the typed entry point: Python's own
        ml.score_cafe(**DEMO["cafe"], score_treshold=0.3)  # type: ignore[call-arg]


def test_errors_name_keywords_from_python_and_flags_on_the_command_line(tmp_path, capsys):
    with pytest.raises(ml.MasklensError, match=r"^score_threshold= must be a number in \[0, 1\], got 2"):
        ml.score("cafe", **DEMO["cafe"], score_threshold=2)
    assert main(["score", "cafe", "--ann", DEMO["cafe"]["ann"], "--pred", DEMO["cafe"]["pred"],
                 "--score-threshold", "2"]) == 2
    assert "--score-threshold must be a number in [0, 1], got 2" in capsys.readouterr().err
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(ml.MasklensError) as err:
        inside_root(root, "../x.png")
    assert "with masklens.core.files.paths.allow_outside_root()" in str(err.value)
    assert "--allow-outside-root" not in str(err.value)
    with errors.command_line(), pytest.raises(ml.MasklensError, match="pass --allow-outside-root"):
        inside_root(root, "../x.png")
    assert not errors.on_command_line()


def test_masklens_error_is_at_the_top_and_the_package_is_typed():
    assert ml.MasklensError is errors.MasklensError and "MasklensError" in ml.__all__
    assert {f"score_{k}" for k in DEMO} <= set(ml.__all__) <= set(dir(ml))
    spec = importlib.util.find_spec("masklens.core")
    assert (Path(spec.origin).parent / "py.typed").is_file()
    assert '"masklens.core" = ["py.typed"]' in (ROOT / "pyproject.toml").read_text()


def test_score_result_repr_is_short_and_html_is_a_table():
    r = ml.score_cafe(**DEMO["cafe"])
    text = repr(r)
    assert len(text) < 300 and text.startswith("ScoreResult('cafe'") and "samples=18" in text
    page = r._repr_html_()
    assert page.count("<th>") >= 1 + len(r.summary) and "<table>" in page
    assert f"<td>{r.summary['Overall']['N']}</td>" in page and "AFPR" in page
    odd = ScoreResult("<b>x</b>", {"t": 0.5}, {"g<": {"m&": 1.0}}, [], notes=["<script>"])
    assert "<script>" not in odd._repr_html_() and "&lt;b&gt;x&lt;/b&gt;" in odd._repr_html_()


def test_the_typed_example_runs_and_type_checks():
    sys.path.insert(0, str(ROOT / "tests" / "core"))
    try:
        import typed_api_example as example
    finally:
        sys.path.pop(0)
    assert example.headline() == (18, pytest.approx(0.6111, abs=1e-4))
    assert isinstance(example.oracle(), float)
    assert "did you mean score_threshold=?" in example.misspelt()
    assert {getattr(f, "__name__", None) for f in example.every_public_name()} >= {"export", "score"}
    assert len(example.every_public_name()) == len(ml.__all__)
    # a user's script passes `mypy --strict` (masklens' own modules are read, not reported: as for
    # an installed package); tools/typecheck.py reads the source through build/typecheck
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "typecheck.py"), "--strict",
                          "--follow-imports=silent", str(ROOT / "tests/core/typed_api_example.py")],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_command_line_sets_the_flag_style_only_while_it_runs(tmp_path):
    assert not errors.on_command_line()
    assert main(["score", "cafe", "--ann", DEMO["cafe"]["ann"], "--pred", DEMO["cafe"]["pred"],
                 "--out", str(tmp_path / "s.json")]) == 0
    assert not errors.on_command_line()
