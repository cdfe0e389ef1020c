"""`--shard I/N` and `masklens merge` on the bundled demo: the merged shards equal one unsharded
`predict` byte for byte for every kind; overlaps, gaps and foreign shards are clear errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from masklens.core.cli import main
from masklens.core.errors import MasklensError
from masklens.core.files.output_dirs import MARKER
from masklens.core.inference.shards import Shard, image_groups, parse_shard, partition
from masklens.core.schema import Benchmark, ImageRef, Prompt, Role, Sample

demo = pytest.importorskip("masklens.core.kinds.demo")
KINDS = demo.demo_kinds()


def tree(path: Path) -> dict[str, bytes]:
    """A file's bytes, or every file under a folder by relative path (order-free; the folder's
    marker left out: it names the folder it is in)."""
    if path.is_file():
        return {"": path.read_bytes()}
    return {str(f.relative_to(path)): f.read_bytes() for f in sorted(path.rglob("*"))
            if f.is_file() and f.name != MARKER}


def predict(kind: str, out: Path, *extra: str) -> int:
    return main(["predict", kind, *demo.demo_argv(kind, with_predictions=False), "--model", "demo",
                 "--no-cache", "--quiet", *extra, "--out", str(out)])


@pytest.mark.parametrize("kind", KINDS)
def test_merged_shards_equal_the_unsharded_output(kind, tmp_path, capsys):
    assert predict(kind, tmp_path / "full") == 0
    parts = []
    for i in range(3):
        assert predict(kind, tmp_path / f"part{i}", "--shard", f"{i}/3") == 0, capsys.readouterr().err
        parts += ["--pred", str(tmp_path / f"part{i}")]
    shards = [json.loads((tmp_path / f"part{i}.shard.json").read_text())["samples"] for i in range(3)]
    assert all(shards) and sum(map(len, shards)) == len({s for sh in shards for s in sh})
    rc = main(["merge", kind, *demo.demo_argv(kind, with_predictions=False), *parts,
               "--out", str(tmp_path / "merged")])
    assert rc == 0, capsys.readouterr().err
    full, merged = tree(tmp_path / "full"), tree(tmp_path / "merged")
    assert full and merged == full


def test_cafe_issue_commands_and_errors(tmp_path, capsys):
    argv = demo.demo_argv("cafe", with_predictions=False)
    a, b, out = tmp_path / "A.json", tmp_path / "B.json", tmp_path / "OUT.json"
    assert predict("cafe", a, "--shard", "0/2") == 0 and predict("cafe", b, "--shard", "1/2") == 0
    assert predict("cafe", tmp_path / "full.json") == 0
    capsys.readouterr()
    # a gap: shard 1/2 not given
    assert main(["merge", "cafe", *argv, "--pred", str(a), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "gap: 9 sample(s)" in err and "shards not given: 1/2" in err and not out.exists()
    # an overlap: the same samples in two files
    shutil.copy(a, tmp_path / "A2.json")
    shutil.copy(tmp_path / "A.json.shard.json", tmp_path / "A2.json.shard.json")
    side = json.loads((tmp_path / "A2.json.shard.json").read_text())
    side["shard"] = [1, 2]
    (tmp_path / "A2.json.shard.json").write_text(json.dumps(side))
    assert main(["merge", "cafe", *argv, "--pred", str(a), "--pred", str(tmp_path / "A2.json"),
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "overlapping shards" in err and "A.json" in err and "A2.json" in err and not out.exists()
    # not a shard output
    assert main(["merge", "cafe", *argv, "--pred", str(tmp_path / "full.json"), "--out", str(out)]) == 2
    assert "full.json.shard.json" in capsys.readouterr().err
    # a shard of another benchmark (one sample less)
    ann = json.loads(Path(argv[1]).read_text())
    other = tmp_path / "other.json"
    key = next(k for k, v in ann.items() if isinstance(v, list) and len(v) > 1)
    ann[key] = ann[key][:-1]
    other.write_text(json.dumps(ann))
    rc = main(["merge", "cafe", "--ann", str(other), *argv[2:], "--pred", str(a), "--pred", str(b),
               "--out", str(out)])
    assert rc == 2 and "another benchmark" in capsys.readouterr().err
    # and the good merge
    assert main(["merge", "cafe", *argv, "--pred", str(a), "--pred", str(b), "--out", str(out)]) == 0
    assert out.read_bytes() == (tmp_path / "full.json").read_bytes()
    # an unsharded run over a shard's output removes its (now stale) shard record
    assert predict("cafe", b) == 0 and not (tmp_path / "B.json.shard.json").exists()


@pytest.mark.parametrize("text", ["2/2", "1", "a/b", "-1/2", "0/0", ""])
def test_bad_shard_flags_are_one_line_errors(text, tmp_path, capsys):
    assert predict("cafe", tmp_path / "x.json", f"--shard={text}") == 2
    err = capsys.readouterr().err
    assert "--shard expects I/N" in err and "Traceback" not in err


def test_too_many_shards_is_an_error(tmp_path, capsys):
    assert predict("cafe", tmp_path / "x.json", "--shard", "40/41") == 2
    assert "holds no images" in capsys.readouterr().err


def _bench(spec: list[tuple[str, list[str], int]]) -> Benchmark:
    """Samples (id, image files, prompts per image) with absolute paths that need not exist."""
    samples = []
    for sid, files, n in spec:
        images = {f: ImageRef(f, Path(f"/data/{f}"), 4, 4) for f in files}
        prompts = [Prompt(f"{sid}-{f}-{k}", "x", Role.POSITIVE, f, None) for f in files for k in range(n)]
        samples.append(Sample(sid, images, {}, prompts))
    return Benchmark("toy", "toy", samples)


def test_partition_keeps_shared_images_together_and_balances_prompts(monkeypatch):
    import masklens.core.inference.runner as runner

    monkeypatch.setattr(runner, "resolve_image_path", lambda ref, *a, **k: Path(ref.path))
    bench = _bench([("a", ["1.png", "2.png"], 2), ("b", ["2.png"], 1), ("c", ["3.png"], 3),
                    ("d", ["4.png"], 1), ("e", ["5.png"], 1), ("f", ["3.png", "6.png"], 1)])
    groups = image_groups(bench)
    assert groups == [[0, 1], [2, 5], [3], [4]]  # a,b share 2.png; c,f share 3.png
    shards = partition(bench, 2)
    # groups by prompts, largest first (ties in benchmark order): {a,b}=5 -> 0, {c,f}=5 -> 1,
    # {d}=1 -> 0 (tie: lowest shard), {e}=1 -> 1
    assert shards == [[0, 1, 3], [2, 4, 5]]
    assert shards == partition(bench, 2)  # deterministic
    weights = [sum(len(bench.samples[i].prompts) for i in s) for s in shards]
    assert weights == [6, 6]
    assert sorted(i for s in partition(bench, 3) for i in s) == list(range(6))
    assert parse_shard("1/4") == Shard(1, 4)
    for bad in ("4/4", " 1/4", "1 / 4", "０/２", "0/" + "9" * 4400, "0/", "-1/4", "0/0"):
        with pytest.raises(MasklensError, match="--shard expects I/N"):
            parse_shard(bad)


@pytest.mark.parametrize("kind", ["cafe", "hallusegbench"])
def test_evaluate_shards_merge_into_the_predict_output(kind, tmp_path, capsys):
    argv = demo.demo_argv(kind, with_predictions=False)
    parts = []
    for i in range(2):
        d = tmp_path / f"eval{i}"
        rc = main(["evaluate", kind, *argv, "--model", "demo", "--no-cache", "--quiet",
                   "--shard", f"{i}/2", "--out", str(d)])
        assert rc == 0, capsys.readouterr().err
        pred = d / "predictions" / "demo"
        assert (d / "predictions" / "demo.shard.json").is_file()
        parts += ["--pred", str(pred if kind == "hallusegbench" else pred / "cafe_results.json")]
    assert predict(kind, tmp_path / "full") == 0
    assert main(["merge", kind, *argv, *parts, "--out", str(tmp_path / "merged")]) == 0
    assert tree(tmp_path / "merged") == tree(tmp_path / "full")


@pytest.mark.parametrize("n", ["100000000000000000000", "1000000000", "19"])
def test_a_shard_count_beyond_the_image_groups_is_refused_at_once(n, tmp_path, capsys):
    """N = 10²⁰ was an OverflowError traceback, 10⁹ allocated until the memory cap."""
    assert predict("cafe", tmp_path / "x.json", "--shard", f"0/{n}") == 2
    err = capsys.readouterr().err
    assert "holds no images" in err and "N may be at most" in err and "Traceback" not in err
    assert not (tmp_path / "x.json").exists()


def _two_shards(tmp_path, *extra_b: str) -> tuple[list[str], Path, Path]:
    a, b = tmp_path / "A.json", tmp_path / "B.json"
    assert predict("cafe", a, "--shard", "0/2") == 0 and predict("cafe", b, "--shard", "1/2", *extra_b) == 0
    return demo.demo_argv("cafe", with_predictions=False), a, b


def _merge(argv, a, b, out) -> int:
    return main(["merge", "cafe", *argv, "--pred", str(a), "--pred", str(b), "--out", str(out)])


def test_merge_refuses_shards_made_with_other_model_settings(tmp_path, capsys):
    argv, a, b = _two_shards(tmp_path, "--score-threshold", "0.9")
    capsys.readouterr()
    assert _merge(argv, a, b, tmp_path / "OUT.json") == 2
    err = capsys.readouterr().err
    assert "other model settings" in err and "score_threshold" in err and str(b) in err
    assert not (tmp_path / "OUT.json").exists()


def test_merge_refuses_an_output_replaced_after_its_shard_ran(tmp_path, capsys):
    argv, a, b = _two_shards(tmp_path)
    b.write_text("[]")  # a valid record, an empty prediction file: was "0 missing"
    capsys.readouterr()
    assert _merge(argv, a, b, tmp_path / "OUT.json") == 2
    err = capsys.readouterr().err
    assert "not the one its shard record was written for" in err and "run shard 1/2 again" in err


def test_a_deep_or_huge_shard_record_is_a_clean_error(tmp_path, capsys):
    argv, a, b = _two_shards(tmp_path)
    record = json.loads((tmp_path / "B.json.shard.json").read_text())
    (tmp_path / "B.json.shard.json").write_text('{"kind": "cafe", "x": ' + "[" * 100000 + "]" * 100000 + "}")
    capsys.readouterr()
    assert _merge(argv, a, b, tmp_path / "OUT.json") == 2
    err = capsys.readouterr().err
    assert "B.json.shard.json" in err and "nest deeper than the limit" in err and "Traceback" not in err
    record["shard"] = [0, 10 ** 20]
    (tmp_path / "B.json.shard.json").write_text(json.dumps(record))
    assert _merge(argv, a, b, tmp_path / "OUT.json") == 2
    err = capsys.readouterr().err
    assert "more shards than" in err and "Traceback" not in err
