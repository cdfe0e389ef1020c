"""The command line as a user meets it, on the bundled demo: score (table / --out / a closed pipe),
predict → score round trips, and `models`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from masklens.core.cli import main
from masklens.core.kinds.demo import demo_argv

KINDS = ["cafe", "pcs", "hallusegbench", "cgebench", "r2sm", "ovs"]
TITLES = {"cafe": "CAFE", "pcs": "SA-Co/Gold", "hallusegbench": "HalluSegBench", "cgebench": "CGEBench",
          "r2sm": "R2SM", "ovs": "Mask-wise OVS"}
PRED_FLAG = {"hallusegbench": "--pred-dir"}


@pytest.mark.parametrize("kind", KINDS)
def test_score_prints_a_table_without_out(kind, capsys):
    assert main(["score", kind, *demo_argv(kind)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].startswith(TITLES[kind])
    assert len(out.splitlines()) >= 4 and err == ""


@pytest.mark.parametrize("kind", KINDS)
def test_score_with_out_writes_json_and_keeps_stdout_clean(kind, tmp_path, capsys):
    out = tmp_path / "res.json"
    assert main(["score", kind, *demo_argv(kind), "--out", str(out)]) == 0
    stdout, err = capsys.readouterr()
    assert stdout == "" and str(out) in err
    data = json.loads(out.read_text())
    assert data["benchmark"] == kind and data["summary"] and data["samples"]
    assert [p.name for p in tmp_path.iterdir()] == ["res.json"]  # no temporary left behind


def test_score_piped_to_head_exits_quietly():
    """`masklens score … | head -1`: no BrokenPipeError traceback, exit status 0."""
    code = ("import sys; from masklens.core.cli import main; from masklens.core.kinds.demo import demo_argv;"
            "sys.exit(main(['score', 'ovs', *demo_argv('ovs')]))")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, like `head -1`
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err


def _predict(kind, out, *extra):
    args = ["predict", kind, *demo_argv(kind, with_predictions=False), "--model", "demo", "--no-cache",
            "--quiet", *extra, "--out", str(out)]
    assert main(args) == 0


ROUND_TRIP = ["hallusegbench", "cgebench", "r2sm", "ovs", "cafe", "pcs"]


@pytest.mark.parametrize("kind", ROUND_TRIP)
def test_predict_to_a_plain_path_then_score_that_path(kind, tmp_path, capsys):
    out = tmp_path / "x"  # no extension, as a user types it
    _predict(kind, out)
    capsys.readouterr()
    flag = PRED_FLAG.get(kind, "--pred")
    assert main(["score", kind, *demo_argv(kind, with_predictions=False), flag, str(out)]) == 0
    assert capsys.readouterr().out.startswith(TITLES[kind])


@pytest.mark.parametrize("kind", ["r2sm", "ovs"])
def test_predict_json_output_scores_like_the_committed_demo(kind, tmp_path, capsys):
    """The committed predictions are the demo model's own: the same scores from a fresh predict."""
    out = tmp_path / "pred.json"
    _predict(kind, out, "--score-threshold", "0.05")
    assert main(["score", kind, *demo_argv(kind, with_predictions=False), "--pred", str(out),
                 "--out", str(tmp_path / "a.json")]) == 0
    assert main(["score", kind, *demo_argv(kind), "--out", str(tmp_path / "b.json")]) == 0
    a, b = (json.loads((tmp_path / n).read_text()) for n in ("a.json", "b.json"))
    assert a["summary"] == b["summary"]


def test_r2sm_modal_phrasings_at_the_default_threshold(tmp_path, capsys):
    """'the part of X you can see' is understood: modal gIoU is 1 without lowering the threshold."""
    out = tmp_path / "pred.json"
    _predict("r2sm", out)
    res = tmp_path / "res.json"
    assert main(["score", "r2sm", *demo_argv("r2sm", with_predictions=False), "--pred", str(out),
                 "--out", str(res)]) == 0
    assert json.loads(res.read_text())["summary"]["modal"]["gIoU"] == pytest.approx(1.0)


def test_models_lists_the_demo_backend_offline(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "demo" in out and "[ready]" in out
