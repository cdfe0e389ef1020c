"""`masklens report`, `masklens evaluate`, `masklens review` end to end (toy kind, real files)."""

import json

import pytest

from masklens.core.cli import main
from masklens.core.review.locations import benchmark_key
from masklens.core.review.store import Role, open_store

from .toykind import BrightSegmenter, install, install_backend, write_fixture


@pytest.fixture
def files(tmp_path, monkeypatch):
    install()
    install_backend()
    monkeypatch.setenv("MASKLENS_CACHE_DIR", str(tmp_path / "cache"))
    return write_fixture(tmp_path)


def test_report_cli_two_models_and_reviews(files, tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ann") as st:
        st.record(benchmark_key(type("B", (), {"kind": "toy", "name": "toybench"})), "s2", "gt_wrong")
    out = tmp_path / "rep"
    rc = main(["report", "toy", "--ann", str(files["ann"]), "--pred", str(files["pred_a"]),
               "--pred", str(files["pred_b"]), "--label", "A", "--label", "B",
               "--reviews", str(db), "--out", str(out), "--score-threshold", "0.4"])
    assert rc == 0
    doc = json.loads((out / "summary.json").read_text())
    assert list(doc["models"]) == ["A", "B"]
    assert doc["params"]["score_threshold"] == 0.4
    assert [e["sample"] for e in doc["reviews"]["excluded"]] == ["s2"]
    assert "masklens report toy" in doc["provenance"]["command"] or doc["provenance"]["command"]


def test_report_cli_errors_are_one_line(files, tmp_path, capsys):
    rc = main(["report", "toy", "--ann", str(files["ann"]), "--pred", str(files["pred_a"]),
               "--label", "A", "--label", "B", "--out", str(tmp_path / "rep")])
    assert rc == 2
    err = capsys.readouterr().err
    assert "--label given 2 times for 1" in err and "Traceback" not in err
    assert not (tmp_path / "rep").exists()
    rc = main(["report", "toy", "--ann", str(files["ann"]), "--pred", str(files["pred_a"]),
               "--reviews", str(tmp_path / "nope.sqlite"), "--out", str(tmp_path / "rep")])
    assert rc == 2 and "review database not found" in capsys.readouterr().err


def test_evaluate_cli_subset_resume_and_report(files, tmp_path, capsys):
    out = tmp_path / "ev"
    BrightSegmenter.calls = 0
    argv = ["evaluate", "toy", "--ann", str(files["ann"]), "--model", "bright", "--group", "A",
            "--out", str(out), "--quiet"]
    assert main(argv) == 0
    assert BrightSegmenter.calls == 4  # 2 samples of group A × 2 prompts
    summary = json.loads((out / "summary.json").read_text())
    res = summary["models"]["bright"]
    assert summary["samples"] == 2 and res["stats"]["computed"] == 4
    assert res["summary"]["all"]["TP_rate"] == 1.0 and res["summary"]["all"]["FPR"] == 0.0
    scores = json.loads((out / "scores" / "bright.json").read_text())
    assert [r["sample"] for r in scores["samples"]] == ["s1", "s2"]
    assert (out / "predictions" / "bright").is_dir()
    # a re-run (e.g. after Ctrl-C) answers from the cache: no model call
    assert main(argv + ["--report"]) == 0
    assert BrightSegmenter.calls == 4
    assert (out / "report" / "report.html").is_file()
    # two checkpoints of one backend side by side; the second one's prompts are new
    assert main(["evaluate", "toy", "--ann", str(files["ann"]), "--model", "bright", "--model",
                 "bright", "--weights", "w1", "--weights", "w2", "--samples", "s3",
                 "--out", str(tmp_path / "ev2"), "--quiet"]) == 0
    assert set(json.loads((tmp_path / "ev2" / "summary.json").read_text())["models"]) == {
        "bright@w1", "bright@w2"}


def test_evaluate_cli_bad_subset_and_model(files, tmp_path, capsys):
    base = ["evaluate", "toy", "--ann", str(files["ann"]), "--out", str(tmp_path / "ev"), "--quiet"]
    assert main(base + ["--model", "bright", "--samples", "s1,zzz"]) == 2
    assert "unknown sample id(s): zzz" in capsys.readouterr().err
    assert main(base + ["--model", "bright", "--group", "Q"]) == 2
    assert "unknown group(s): Q" in capsys.readouterr().err
    assert main(base + ["--model", "no-such-model"]) == 2
    assert "unknown model 'no-such-model'" in capsys.readouterr().err


def test_review_cli_export_merge_agreement(tmp_path, capsys):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    with open_store(a, Role.WRITE, reviewer="ann") as st:
        for s, v in (("s1", "fine"), ("s2", "gt_wrong"), ("s3", "fine")):
            st.record("toy:t", s, v)
    with open_store(b, Role.WRITE, reviewer="bob") as st:
        for s, v in (("s1", "fine"), ("s2", "gt_wrong"), ("s3", "model_wrong")):
            st.record("toy:t", s, v)
    assert main(["review", "agreement", str(a), str(b), "--json"]) == 0
    ag = json.loads(capsys.readouterr().out)
    assert ag["reviewers"] == ["ann", "bob"] and ag["items_complete"] == 3
    assert main(["review", "merge", str(a), str(b)]) == 0
    assert main(["review", "merge", str(a), str(b)]) == 0
    assert "merged 0 new" in capsys.readouterr().err
    assert main(["review", "agreement", str(a)]) == 0
    assert "Cohen" in capsys.readouterr().out
    assert main(["review", "export", str(a), "--out", str(tmp_path / "v.csv")]) == 0
    assert len((tmp_path / "v.csv").read_text().splitlines()) == 7
    assert main(["review", "merge", str(a), str(tmp_path / "missing.sqlite")]) == 2
    assert "review database not found" in capsys.readouterr().err
