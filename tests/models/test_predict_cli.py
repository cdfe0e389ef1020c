"""`masklens predict`: writes what `masklens score` reads, caches, resumes, fails clearly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_predict_toykind import ColourSegmenter, ToyKind, build_toy

from masklens.core.cli import main
from masklens.core.models import registry
from masklens.core.scoring import contract as scoring


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """The toy kind and the colour segmenter registered for the duration of one test."""
    monkeypatch.setattr(scoring, "KINDS", scoring.KINDS.copy())
    monkeypatch.setattr(registry, "BACKENDS", registry.BACKENDS.copy())
    scoring.register_kind("toy", ToyKind())
    made: list[ColourSegmenter] = []
    hooks: dict[str, Any] = {}

    def factory(**options: Any) -> ColourSegmenter:
        seg = ColourSegmenter(**options)
        seg.hook = hooks.get("hook")
        made.append(seg)
        return seg

    registry.register_backend(ColourSegmenter.info, factory)
    kind, args, bench = build_toy(tmp_path / "t")
    base = ["predict", "toy", "--model", "toy-colour", "--ann", args.ann,
            "--cache-dir", str(tmp_path / "cache"), "--quiet"]
    return base, made, hooks, args, tmp_path


def calls(made: list[ColourSegmenter]) -> int:
    return sum(s.calls for s in made)


def test_output_is_scored_directly_and_rerun_is_free(cli, capsys):
    base, made, hooks, args, tmp = cli
    out = tmp / "pred.json"
    assert main([*base, "--out", str(out)]) == 0
    assert calls(made) == 5
    err = capsys.readouterr().err
    assert "5 prompts on 2 images (0 from the cache, 5 computed" in err
    records = json.loads(out.read_text())
    assert sorted(r["image_id"] for r in records) == [1, 2, 4]  # absent green and "dark red" on b.png: none
    assert main(["score", "toy", "--ann", args.ann, "--pred", str(out), "--out", str(tmp / "s.json")]) == 0
    summary = json.loads((tmp / "s.json").read_text())["summary"]["Overall"]
    assert summary["mIoU"] == pytest.approx(3 / 5)  # red, blue, green right; absent green / dark red IoU 0
    out2 = tmp / "pred2.json"
    assert main([*base, "--out", str(out2)]) == 0
    assert calls(made) == 5  # the re-run made no model call
    assert "(5 from the cache, 0 computed" in capsys.readouterr().err
    assert json.loads(out2.read_text()) == records


def test_ctrl_c_keeps_finished_work_and_rerun_continues(cli, capsys):
    base, made, hooks, args, tmp = cli
    out = tmp / "pred.json"
    out.write_text("old")

    def hook(request):
        if calls(made) == 4:  # while answering the second image
            raise KeyboardInterrupt

    hooks["hook"] = hook
    assert main([*base, "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "Traceback" not in err
    assert out.read_text() == "old"  # the output is only written at the end
    hooks.clear()
    assert main([*base, "--out", str(out)]) == 0
    assert "(3 from the cache, 2 computed" in capsys.readouterr().err
    assert len(json.loads(out.read_text())) == 3


def test_no_cache_flag(cli, capsys):
    base, made, hooks, args, tmp = cli
    base = [b for b in base if b not in ("--cache-dir", str(tmp / "cache"))]
    for _ in range(2):
        assert main([*base, "--no-cache", "--out", str(tmp / "p.json")]) == 0
    assert calls(made) == 10 and not (tmp / "cache").exists()


def test_replay_through_predict_reproduces_the_file(cli, capsys):
    base, made, hooks, args, tmp = cli
    first = tmp / "first.json"
    assert main([*base, "--out", str(first)]) == 0
    again = tmp / "again.json"
    assert main(["predict", "toy", "--model", "replay", "--ann", args.ann, "--pred", str(first),
                 "--out", str(again), "--quiet", "--no-cache"]) == 0
    assert json.loads(again.read_text()) == json.loads(first.read_text())
    assert main(["predict", "toy", "--model", "replay", "--ann", args.ann, "--weights", str(first),
                 "--out", str(again), "--quiet", "--no-cache"]) == 0


def _error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines and lines[0].startswith("masklens: error: "), err
    return err


def test_clear_errors(cli, capsys, monkeypatch):
    base, made, hooks, args, tmp = cli
    out = str(tmp / "x.json")
    assert main(["predict", "toy", "--model", "nope", "--ann", args.ann, "--out", out]) == 2
    assert "unknown model 'nope'" in _error(capsys)
    assert main([*base, "--pred", "p.json", "--out", out]) == 2
    assert "only with --model replay" in _error(capsys)
    assert main(["predict", "toy", "--model", "replay", "--ann", args.ann, "--out", out]) == 2
    assert "--pred" in _error(capsys)
    assert main([*base, "--option", "novalue", "--out", out]) == 2
    assert "KEY=VALUE" in _error(capsys)
    # an undecodable image names its path
    bad = tmp / "t" / "bench" / "images" / "b.png"
    bad.write_bytes(b"garbage")
    assert main([*base, "--out", out]) == 2
    assert str(bad) in _error(capsys)
    assert calls(made) == 3  # a.png was done (and cached) before b.png failed


def test_cuda_requested_without_cuda(cli, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():  # pragma: no cover - no GPU in CI
        pytest.skip("this machine has CUDA")
    base, made, hooks, args, tmp = cli
    assert main([*base, "--device", "cuda", "--out", str(tmp / "x.json")]) == 2
    err = _error(capsys)
    assert "CUDA is not available" in err and "--device cpu" in err
    assert made == []  # failed before creating the model
    assert main([*base, "--device", "cuda:3", "--out", str(tmp / "x.json")]) == 2
    assert "CUDA is not available" in _error(capsys)
    assert main([*base, "--device", "tpu", "--out", str(tmp / "x.json")]) == 2
    assert "unknown device 'tpu'" in _error(capsys)


def test_missing_weights_for_a_real_backend(cli, capsys, tmp_path, monkeypatch):
    base, made, hooks, args, tmp = cli
    pytest.importorskip("masklens.core.models.sam3")
    missing = tmp_path / "no-such-checkpoint"
    cmd = ["predict", "toy", "--model", "sam3", "--ann", args.ann, "--device", "cpu",
           "--cache-dir", str(tmp / "cache"), "--quiet", "--out", str(tmp / "x.json")]
    assert main([*cmd, "--weights", str(missing)]) == 2
    err = _error(capsys)
    assert str(missing) in err and "not found" in err
    # the default checkpoint is not in the (empty, offline) Hugging Face cache: say how to get it
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    assert main(cmd) == 2
    err = _error(capsys)
    assert "facebook/sam3" in err and "hf download" in err


def test_explicit_score_threshold_applies_to_the_output(cli, capsys):
    base, made, hooks, args, tmp = cli
    out = tmp / "p.json"
    assert main([*base, "--score-threshold", "0.95", "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == []  # every instance scored 0.9 < 0.95
    assert made[-1].options["score_threshold"] == 0.95  # and the backend was told
    assert main([*base, "--score-threshold", "0.9", "--out", str(out)]) == 0
    assert len(json.loads(out.read_text())) == 3  # inclusive


def test_output_folder_is_replaced_in_one_step(tmp_path, capsys):
    """A folder output (HalluSegBench) replaces the previous folder whole; a failed write keeps it."""
    from masklens.core.kinds.demo import demo_argv, demo_kinds

    if "hallusegbench" not in demo_kinds():
        pytest.skip("no HalluSegBench demo")
    from masklens.core.files.output_dirs import write_marker

    out = tmp_path / "pred"
    (out / "orgl_orgi").mkdir(parents=True)
    (out / "stale.txt").write_text("from an older run")
    write_marker(out, "predictions")  # that run was masklens' (a folder of the user's is refused)
    argv = demo_argv("hallusegbench", with_predictions=False)
    assert main(["predict", "hallusegbench", "--model", "demo", *argv, "--no-cache", "--quiet",
                 "--out", str(out)]) == 0
    assert not (out / "stale.txt").exists()
    items = json.loads(Path(argv[argv.index("--data") + 1]).read_text())
    assert len(list(out.rglob("*.png"))) == 4 * len(items)  # four folders, one PNG per item
    assert [p.name for p in tmp_path.iterdir()] == ["pred"]  # no temporary left behind


def test_failed_move_of_a_new_output_folder_puts_the_previous_one_back(tmp_path, monkeypatch):
    """If the new folder cannot be moved in, the previous output is restored, not deleted."""
    import os

    from masklens.core.errors import MasklensError
    from masklens.core.inference.prediction_io import write_atomically

    class FolderKind:
        name = "folder"

        def write_predictions(self, benchmark: Any, predictions: Any, out: Path) -> list[Path]:
            out.mkdir()
            (out / "new.txt").write_text("new")
            return [out / "new.txt"]

    from masklens.core.files.output_dirs import write_marker

    out = tmp_path / "pred"
    out.mkdir()
    (out / "old.txt").write_text("old")
    write_marker(out, "predictions")  # a previous output of masklens'
    real_replace = os.replace

    def replace(src: Any, dst: Any) -> None:
        if Path(src).name == "pred" and Path(dst) == out.absolute():  # the new folder moving in
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(MasklensError, match="cannot write the output"):
        write_atomically(FolderKind(), None, None, out)
    assert (out / "old.txt").read_text() == "old" and not (out / "new.txt").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["pred"]  # no temporary left behind
    monkeypatch.undo()
    assert write_atomically(FolderKind(), None, None, out) == [out.absolute() / "new.txt"]
    assert not (out / "old.txt").exists()
