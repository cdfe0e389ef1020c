"""`masklens score` on every bundled demo equals, byte for byte, the outputs recorded before the
code was moved into its new layout (tests/fixtures/score_outputs/: the JSON file of ``--out`` and
the table printed without it). The JSON file has one key more than the recording, last:
``provenance`` (when and from which files it was made, so it differs from run to run); every
byte before it is the recording's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from masklens.core.cli import main
from masklens.core.kinds.demo import demo_argv

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "score_outputs"
KINDS = ["cafe", "pcs", "hallusegbench", "cgebench", "r2sm", "ovs"]


@pytest.mark.parametrize("kind", KINDS)
def test_score_json_equals_recorded_bytes(kind, tmp_path, capsys):
    out = tmp_path / f"{kind}.json"
    assert main(["score", kind, *demo_argv(kind), "--out", str(out)]) == 0
    written, recorded = out.read_bytes(), (RECORDED / f"{kind}.json").read_bytes()
    score, sep, provenance = written.partition(b',"provenance":')
    assert sep and score + b"}\n" == recorded  # the score: the recording, byte for byte
    assert json.loads(b"{" + sep.lstrip(b",") + provenance)["provenance"]["kind"] == kind


@pytest.mark.parametrize("kind", KINDS)
def test_score_table_equals_recorded_bytes(kind, capsys):
    assert main(["score", kind, *demo_argv(kind)]) == 0
    assert capsys.readouterr().out == (RECORDED / f"{kind}.txt").read_text()
