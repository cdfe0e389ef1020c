"""Command-line values that are out of range, empty or not UTF-8 end in one line naming the
flag, exit 2, never a traceback; an `hf://` path is named as it was given."""

from __future__ import annotations

import os
import shutil
import sqlite3

import pytest

from masklens.core.cli import main
from masklens.core.kinds.demo import DEMO_DIR, demo_argv
from masklens.core.review.store import Role, open_store

#: a name as Python reads it from non-UTF-8 command-line bytes (b"a\xff\xfe")
NOT_UTF8 = os.fsdecode(b"a\xff\xfe")


def _one_error(capsys, *expected: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.startswith(("masklens: error:", "usage:")), err
    for text in expected:
        assert text in err, err
    return err


@pytest.fixture
def cafe(tmp_path):
    shutil.copytree(DEMO_DIR / "cafe", tmp_path / "cafe")
    return demo_argv("cafe", with_predictions=False, root=tmp_path)


@pytest.mark.parametrize(("flag", "value", "expected"), [
    ("--seed", "1000000000000000000000000000000", "seed must be an integer in [0, 2**63)"),
    ("--seed", "-1", "seed must be an integer in [0, 2**63)"),
    ("--reviewers", f"ana,{NOT_UTF8}", "bytes that are not UTF-8"),
])
def test_review_assign_refuses_values_the_store_cannot_hold(cafe, tmp_path, capsys, flag, value, expected):
    db = tmp_path / "r.sqlite"
    argv = ["review", "assign", "cafe", *cafe, "--store", str(db), "--reviewers", "ana,ben", flag, value]
    assert main(argv) == 2
    _one_error(capsys, expected, flag)
    if db.exists():
        with open_store(db, Role.READ) as st:
            assert st.assigned_reviewers("cafe:ann") == []


def test_a_non_utf8_name_looked_up_in_a_store_is_one_line(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    open_store(db, Role.WRITE).close()
    before = db.read_bytes()
    assert main(["review", "queue", str(db), "--benchmark", NOT_UTF8]) == 2
    _one_error(capsys, "characters UTF-8 cannot hold")
    assert db.read_bytes() == before


@pytest.mark.parametrize("shard", ["0/" + "9" * 4400, "０/２", " 0/2", "0 /2", "0/2 ", "1/1", "0/0"])
def test_shard_takes_ascii_digits_only(cafe, tmp_path, capsys, shard):
    out = tmp_path / "p.json"
    assert main(["predict", "cafe", *cafe, "--model", "demo", "--no-cache", "--quiet",
                 "--shard", shard, "--out", str(out)]) == 2
    _one_error(capsys, "--shard expects I/N")
    assert not out.exists()


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_a_backend_option_of_the_wrong_type_is_one_line(cafe, tmp_path, capsys, command):
    out = tmp_path / "out"
    assert main([command, "cafe", *cafe, "--model", "demo", "--no-cache", "--quiet",
                 "--option", "score_threshold=[1,2]", "--out", str(out)]) == 2
    _one_error(capsys, "model 'demo' cannot take these options", "score_threshold=[1, 2]")
    assert not out.exists()


def test_evaluate_with_empty_samples_is_refused_not_the_whole_benchmark(cafe, tmp_path, capsys):
    out = tmp_path / "ev"
    assert main(["evaluate", "cafe", *cafe, "--model", "demo", "--no-cache", "--quiet",
                 "--samples", "", "--out", str(out)]) == 2
    _one_error(capsys, "--samples names no sample id")
    assert not out.exists()


@pytest.mark.parametrize("value", ["-1", "x"])
def test_report_gallery_is_a_whole_number(cafe, tmp_path, capsys, value):
    argv = ["report", "cafe", *demo_argv("cafe", root=tmp_path), "--gallery", value,
            "--out", str(tmp_path / "r")]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    _one_error(capsys, "--gallery: expects a whole number ≥ 0")


def test_report_refuses_a_correction_of_a_missing_sample_as_score_and_apply_do(cafe, tmp_path, capsys):
    import masklens.core as ml
    from masklens.core.masks import Mask
    from masklens.core.review.locations import benchmark_key

    bench = ml.load_benchmark("cafe", ann=tmp_path / "cafe" / "ann.json")
    g = bench.samples[0].gts["target"]
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ana") as st:
        st.add_correction(benchmark_key(bench), bench.samples[0].id, "target", 0,
                          Mask.from_array(__import__("numpy").ones((g.height, g.width), bool)))
    with sqlite3.connect(db) as con:
        con.execute("UPDATE corrections SET sample_id = 'no-such-sample'")
    full = demo_argv("cafe", root=tmp_path)
    for argv in (["report", "cafe", *full, "--reviews", str(db), "--out", str(tmp_path / "r")],
                 ["score", "cafe", *full, "--corrections", str(db)],
                 ["review", "apply", "cafe", *cafe, "--store", str(db), "--out", str(tmp_path / "c.json")]):
        assert main(argv) == 2, argv
        _one_error(capsys, "corrects sample 'no-such-sample'")
    assert not (tmp_path / "r").exists() and not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("action", ["apply", "assign"])
def test_review_commands_name_an_hf_path_as_given(tmp_path, capsys, monkeypatch, action):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    url = "hf://datasets/nobody/none/ann.json"
    extra = ["--out", str(tmp_path / "c.json")] if action == "apply" else ["--reviewers", "a,b"]
    assert main(["review", action, "cafe", "--ann", url, "--store", str(tmp_path / "r.sqlite"), *extra]) == 2
    err = _one_error(capsys, url)
    assert "hf:/d" not in err


@pytest.mark.parametrize("argv", [
    ["review", "export", "{hf}", "--out", "{tmp}/v.json"],
    ["review", "check", "{hf}"],
    ["review", "merge", "{hf}", "{tmp}/other.sqlite"],
    ["score", "cafe", *demo_argv("cafe"), "--corrections", "{hf}"],
])
def test_a_review_store_given_as_hf_path_is_named_as_given_and_never_created(tmp_path, capsys,
                                                                              monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    open_store(tmp_path / "other.sqlite", Role.WRITE).close()
    url = "hf://datasets/nobody/none/r.sqlite"
    assert main([a.format(hf=url, tmp=tmp_path) for a in argv]) == 2
    err = _one_error(capsys, f"{url}: a review database is a local file")
    assert "hf:/d" not in err
    assert not (tmp_path / "hf:").exists()
