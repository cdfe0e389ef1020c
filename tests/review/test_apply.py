"""`masklens review apply`: the corrected benchmark in its own format; `masklens score` on it
equals scoring with the corrections applied in Python; inputs never written over."""

import hashlib
import json
import shutil
import sqlite3

import numpy as np
import pytest

import masklens.core as ml
from masklens.core.cli import main
from masklens.core.errors import MasklensError
from masklens.core.kinds.demo import DEMO_DIR, demo_argv
from masklens.core.masks import Mask
from masklens.core.review.corrections import corrected_benchmark, corrected_scorer
from masklens.core.review.locations import benchmark_key
from masklens.core.review.store import Role, open_store
from masklens.core.scoring.contract import Scorer, get_kind
from masklens.core.scoring.kind_args import kind_files, kind_parser

#: kind -> (gt key of the corrected instances, the output name given to --out)
CASES = {"cafe": ("pos_entry", "corrected.json"), "pcs": ("gt0", "corrected"),
         "cgebench": ("G", "corrected.json"), "ovs": ("circle", "corrected.json"),
         "hallusegbench": ("factual", "corrected.json")}


def _files(kind, argv):
    k = get_kind(kind)
    parser = kind_parser(k)
    for a in parser._actions:
        a.required = False
    return kind_files(k, parser.parse_args(argv))


def _digests(folder):
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def _box(h, w, frac):
    a = np.zeros((h, w), bool)
    a[: max(1, int(h * frac)), : max(1, int(w * frac))] = True
    return Mask.from_array(a)


def _correct(st, bench, key):
    """Replace instance 0 of the first sample, add an instance to the second, delete the third's
    instance 0 when it has another to keep (else replace it): planted, known changes."""
    bk = benchmark_key(bench)
    s0, s1, s2 = bench.samples[:3]
    g0 = s0.gts[key]
    st.add_correction(bk, s0.id, key, 0, _box(g0.height, g0.width, 0.5), tool="brush", note="too small")
    g1 = s1.gts[key]
    st.add_correction(bk, s1.id, key, None, _box(g1.height, g1.width, 0.25), tool="model")
    g2 = s2.gts[key]
    if len(g2.masks) > 1:
        st.add_correction(bk, s2.id, key, 0, None, tool="delete", note="not the object")
    else:
        st.add_correction(bk, s2.id, key, 0, _box(g2.height, g2.width, 0.1), tool="polygon")


@pytest.mark.parametrize("kind", list(CASES))
def test_apply_then_score_equals_python_corrected_scores(kind, tmp_path, capsys):
    key, out_name = CASES[kind]
    shutil.copytree(DEMO_DIR / kind, tmp_path / kind)
    gt_argv = demo_argv(kind, with_predictions=False, root=tmp_path)
    pred_argv = demo_argv(kind, root=tmp_path)[len(gt_argv):]
    files = _files(kind, gt_argv)
    bench = ml.load_benchmark(kind, **files)
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ana") as st:
        _correct(st, bench, key)
        rows = st.corrections(benchmark_key(bench))
    with sqlite3.connect(db) as con:  # as a reviewer may hand it over: a rollback-journal file
        assert con.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
    before = _digests(tmp_path / kind)
    store_before = (db.read_bytes(), db.stat().st_mtime_ns, sorted(p.name for p in tmp_path.glob("r.sqlite*")))
    out = tmp_path / "out" / out_name
    out.parent.mkdir()
    assert main(["review", "apply", kind, *gt_argv, "--store", str(db), "--out", str(out)]) == 0
    # the store is read, never written: same bytes, same mtime, nothing left beside it
    assert (db.read_bytes(), db.stat().st_mtime_ns, sorted(p.name for p in tmp_path.glob("r.sqlite*"))) == store_before
    assert "applied 3 correction(s) to 3 sample(s)" in capsys.readouterr().err
    after = _digests(tmp_path / kind)
    assert {p: d for p, d in after.items() if p in before} == before  # no input written over
    new_files = set(after) - set(before)
    if kind == "hallusegbench":  # new PNGs beside the originals
        assert len(new_files) == 3 and all(".corrected-" in p.name for p in new_files)
    else:
        assert not new_files

    # Python: the corrections applied to the loaded benchmark, only the changed samples re-read
    preds = ml.load_predictions(kind, bench, **_files(kind, demo_argv(kind, root=tmp_path)))
    original = Scorer(get_kind(kind), bench, preds)
    py = corrected_scorer(original, rows).rescore()
    assert py.to_json() == Scorer(get_kind(kind), corrected_benchmark(bench, rows), preds).rescore().to_json()
    assert py.summary != original.rescore().summary  # the planted corrections move the scores

    # the CLI on the written benchmark
    new_argv = _swap(kind, gt_argv, out)
    res = tmp_path / "scores.json"
    assert main(["score", kind, *new_argv, *pred_argv, "--out", str(res)]) == 0
    cli = json.loads(res.read_text())
    assert cli["summary"] == json.loads(json.dumps(py.to_json()["summary"]))
    assert cli["samples"] == json.loads(json.dumps(list(py.samples)))

    log = json.loads((out.with_name(out.stem + ".changelog.json") if out.suffix
                      else out / "changelog.json").read_text())
    assert [(e["reviewer"], e["tool"], e["action"]) for e in log["corrections"]][:2] == [
        ("ana", "brush", "replaced"), ("ana", "model", "added")]
    first = log["corrections"][0]
    assert first["note"] == "too small" and first["area_before"] > 0
    assert first["area_after"] == _box(*bench.samples[0].gts[key].masks[0].shape, 0.5).area
    assert 0 <= first["iou_before_after"] < 1


def _swap(kind, argv, out):
    """The ground-truth arguments with the corrected file(s) in place of the originals."""
    new = list(argv)
    if kind == "pcs":
        for i, tok in enumerate(argv):
            if i and argv[i - 1] == "--gt":
                new[i] = str(out / tok.rsplit("/", 1)[1])
        return new
    flag = {"hallusegbench": "--data"}.get(kind, "--ann")
    new[argv.index(flag) + 1] = str(out)
    return new


def test_apply_refuses_inputs_conflicts_and_foreign_outputs(tmp_path, capsys):
    shutil.copytree(DEMO_DIR / "cafe", tmp_path / "cafe")
    gt_argv = demo_argv("cafe", with_predictions=False, root=tmp_path)
    ann = tmp_path / "cafe" / "ann.json"
    bench = ml.load_benchmark("cafe", **_files("cafe", gt_argv))
    bk, s0 = benchmark_key(bench), bench.samples[0]
    h, w = s0.gts["target"].height, s0.gts["target"].width
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ana") as st:
        st.add_correction(bk, s0.id, "target", 0, _box(h, w, 0.5), tool="brush")
    original = ann.read_bytes()
    assert main(["review", "apply", "cafe", *gt_argv, "--store", str(db), "--out", str(ann)]) == 2
    assert "is this run's input" in capsys.readouterr().err
    assert ann.read_bytes() == original
    foreign = tmp_path / "mine.json"
    foreign.write_text("{}")
    assert main(["review", "apply", "cafe", *gt_argv, "--store", str(db), "--out", str(foreign)]) == 2
    assert "not written by `masklens review apply`" in capsys.readouterr().err
    assert foreign.read_text() == "{}"
    with open_store(db, Role.WRITE, reviewer="ben") as st:  # ben corrects the same instance differently
        st.add_correction(bk, s0.id, "pos_entry", 0, _box(h, w, 0.3), tool="model")
    out = tmp_path / "new.json"
    assert main(["review", "apply", "cafe", *gt_argv, "--store", str(db), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "1 instance(s) corrected differently" in err and "ana: new mask" in err and "ben: new mask" in err
    assert not out.exists()
    assert main(["review", "apply", "cafe", *gt_argv, "--store", str(db), "--out", str(out),
                 "--reviewer", "ben"]) == 0
    corrected = ml.load_benchmark("cafe", ann=out, images=tmp_path / "cafe" / "images")
    assert corrected.sample(s0.id).gts["target"].masks == [_box(h, w, 0.3)]
    # again over its own output: allowed (its changelog is there)
    assert main(["review", "apply", "cafe", *gt_argv, "--store", str(db), "--out", str(out),
                 "--reviewer", "ana"]) == 0


def _cafe_store(tmp_path):
    shutil.copytree(DEMO_DIR / "cafe", tmp_path / "cafe")
    gt_argv = demo_argv("cafe", with_predictions=False, root=tmp_path)
    bench = ml.load_benchmark("cafe", **_files("cafe", gt_argv))
    s0 = bench.samples[0]
    db = tmp_path / "S.sqlite"
    with open_store(db, Role.WRITE, reviewer="ana") as st:
        g = s0.gts["target"]
        st.add_correction(benchmark_key(bench), s0.id, "target", 0, _box(g.height, g.width, 0.5))
        st.record(benchmark_key(bench), s0.id, "gt_wrong")
    return gt_argv, db


def test_apply_never_writes_over_the_store_it_reads(tmp_path, capsys):
    gt_argv, db = _cafe_store(tmp_path)
    apply = ["review", "apply", "cafe", *gt_argv, "--store", str(db), "--out"]
    assert main([*apply, str(tmp_path / "S.json")]) == 0, capsys.readouterr().err
    assert (tmp_path / "S.changelog.json").is_file()  # the changelog S.sqlite would also get
    before = _digests(tmp_path)
    assert main([*apply, str(db)]) == 2
    err = capsys.readouterr().err
    assert "is this run's input" in err and "Traceback" not in err
    assert main([*apply, str(tmp_path)]) == 2  # the store's (and the benchmark's) folder
    assert "this run's input" in capsys.readouterr().err
    assert _digests(tmp_path) == before
    with open_store(db, Role.READ) as st:
        assert len(st.corrections()) == 1 and len(st.current()) == 1


def test_apply_to_a_path_without_suffix_writes_both_files_and_runs_again(tmp_path, capsys):
    gt_argv, db = _cafe_store(tmp_path)
    out = tmp_path / "corrected"
    apply = ["review", "apply", "cafe", *gt_argv, "--store", str(db), "--out", str(out)]
    for _ in range(2):  # a re-run replaces its own output
        assert main(apply) == 0, capsys.readouterr().err
        assert out.is_file() and json.loads(out.read_text())["images"]
        log = json.loads((tmp_path / "corrected.changelog.json").read_text())
        assert log["written"] == [str(out)]
    (tmp_path / "other").write_text("mine")  # a changelog of someone else's: never replaced
    (tmp_path / "other.changelog.json").write_text("mine too")
    (tmp_path / "other").unlink()
    assert main([*apply[:-1], str(tmp_path / "other")]) == 2
    assert "changelog of another output" in capsys.readouterr().err
    assert not (tmp_path / "other").exists()
    assert (tmp_path / "other.changelog.json").read_text() == "mine too"


def test_r2sm_modal_and_amodal_stay_paired(tmp_path, capsys):
    gt_argv = demo_argv("r2sm", with_predictions=False)
    pred_argv = demo_argv("r2sm")[len(gt_argv):]
    bench = ml.load_benchmark("r2sm", **_files("r2sm", gt_argv))
    s0, s1, s2 = bench.samples[:3]
    key = benchmark_key(bench)
    first = {s.id: next(k for k in s.gts if k.endswith("/modal")) for s in (s0, s1, s2)}
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ana") as st:
        g = s0.gts[first[s0.id]]
        st.add_correction(key, s0.id, first[s0.id], 0, _box(g.height, g.width, 0.5), tool="brush")
        amodal1 = first[s1.id].replace("/modal", "/amodal")
        st.add_correction(key, s1.id, amodal1, None, _box(g.height, g.width, 0.2), tool="new")
        st.add_correction(key, s2.id, first[s2.id], 0, None, tool="delete")
        rows = st.corrections(key)
    fixed = corrected_benchmark(bench, rows)
    f1 = fixed.sample(s1.id)
    assert f1.gts[first[s1.id]].masks[-1] == f1.gts[amodal1].masks[-1]  # added to both
    f2 = fixed.sample(s2.id)
    n = len(s2.gts[first[s2.id]].masks)
    assert len(f2.gts[first[s2.id]].masks) == len(f2.gts[first[s2.id].replace("/modal", "/amodal")].masks) == n - 1
    out = tmp_path / "new.json"
    assert main(["review", "apply", "r2sm", *gt_argv, "--store", str(db), "--out", str(out)]) == 0
    preds = ml.load_predictions("r2sm", bench, **_files("r2sm", demo_argv("r2sm")))
    py = corrected_scorer(Scorer(get_kind("r2sm"), bench, preds), rows).rescore()
    assert py.summary != Scorer(get_kind("r2sm"), bench, preds).rescore().summary
    res = tmp_path / "s.json"
    assert main(["score", "r2sm", *_swap("r2sm", gt_argv, out), *pred_argv, "--out", str(res)]) == 0
    cli = json.loads(res.read_text())
    assert cli["summary"] == json.loads(json.dumps(py.summary))
    assert cli["samples"] == json.loads(json.dumps(list(py.samples)))



def test_cafe_positive_shared_by_two_pairs_is_corrected_in_both(tmp_path, capsys):
    shutil.copytree(DEMO_DIR / "cafe", tmp_path / "cafe")
    ann = tmp_path / "cafe" / "ann.json"
    data = json.loads(ann.read_text())
    second = {**next(im for im in data["images"] if im.get("fp_source_id") == 1),
              "id": 1999999999, "text_input": "giraffe"}
    data["images"].append(second)  # a second negative of positive image 1
    ann.write_text(json.dumps(data))
    gt_argv = demo_argv("cafe", with_predictions=False, root=tmp_path)
    bench = ml.load_benchmark("cafe", **_files("cafe", gt_argv))
    a, b = bench.sample("1/1000000001"), bench.sample("1/1999999999")
    g = a.gts["pos_entry"]
    new = _box(g.height, g.width, 0.4)
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ana") as st:
        st.add_correction(benchmark_key(bench), a.id, "target", 0, new, tool="brush")
        rows = st.corrections(benchmark_key(bench))
    fixed = corrected_benchmark(bench, rows)
    for sid in (a.id, b.id):  # the positive image's annotation is one: corrected in both pairs
        assert fixed.sample(sid).gts["pos_entry"].masks[0] == new
        assert fixed.sample(sid).gts["target"].masks == [new]
    preds = ml.load_predictions("cafe", bench, pred=tmp_path / "cafe" / "pred_demo.json")
    py = corrected_scorer(Scorer(get_kind("cafe"), bench, preds), rows).rescore()
    out = tmp_path / "new.json"
    assert main(["review", "apply", "cafe", *gt_argv, "--store", str(db), "--out", str(out)]) == 0
    res = tmp_path / "s.json"
    assert main(["score", "cafe", *_swap("cafe", gt_argv, out), "--pred",
                 str(tmp_path / "cafe" / "pred_demo.json"), "--out", str(res)]) == 0
    assert json.loads(res.read_text())["summary"] == json.loads(json.dumps(py.summary))


def test_export_coco_with_corrections(tmp_path, capsys):
    gt_argv = demo_argv("cafe", with_predictions=False)
    bench = ml.load_benchmark("cafe", **_files("cafe", gt_argv))
    s0 = bench.samples[0]
    g = s0.gts["target"]
    new = _box(g.height, g.width, 0.3)
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ana") as st:
        st.add_correction(benchmark_key(bench), s0.id, "target", 0, new, tool="brush")

    def target_areas(folder):
        doc = json.loads((folder / "ground_truth.json").read_text())
        return [a["area"] for a in doc["annotations"]
                if a["sample_id"] == s0.id and a["role"] == "positive"]

    for name, extra in (("plain", []), ("fixed", ["--corrections", str(db)])):
        assert main(["export", "cafe", *demo_argv("cafe"), "--to", "coco", "--out",
                     str(tmp_path / name), *extra]) == 0
    assert target_areas(tmp_path / "plain") == [g.masks[0].area]
    assert target_areas(tmp_path / "fixed") == [new.area]
    assert json.loads((tmp_path / "fixed" / "masklens-export.json").read_text())["corrections"] == 1


def test_apply_keeps_records_and_writes_a_changed_category(tmp_path, capsys):
    shutil.copytree(DEMO_DIR / "cafe", tmp_path / "cafe")
    gt_argv = demo_argv("cafe", with_predictions=False, root=tmp_path)
    bench = ml.load_benchmark("cafe", **_files("cafe", gt_argv))
    s0, s1 = bench.samples[:2]
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ana") as st:  # same mask, another category
        st.add_correction(benchmark_key(bench), s0.id, "pos_entry", 0, s0.gts["pos_entry"].masks[0],
                          tool="category", category=7)
        g = s1.gts["pos_entry"]
        st.add_correction(benchmark_key(bench), s1.id, "pos_entry", None, _box(g.height, g.width, 0.2),
                          tool="new", category=9)
    out = tmp_path / "new.json"
    assert main(["review", "apply", "cafe", *gt_argv, "--store", str(db), "--out", str(out)]) == 0
    old = {a["id"]: a for a in json.loads((tmp_path / "cafe" / "ann.json").read_text())["annotations"]}
    new = json.loads(out.read_text())["annotations"]
    pos0, pos1 = (int(s.id.split("/")[0]) for s in (s0, s1))
    (changed,) = [a for a in new if a["image_id"] == pos0]
    assert changed == {**old[changed["id"]], "category_id": 7}  # the record kept, its category changed
    added = [a for a in new if a["image_id"] == pos1 and a["id"] not in old]
    assert [(a["category_id"], a["iscrowd"], a["area"]) for a in added] == [
        (9, 0, _box(g.height, g.width, 0.2).area)]
    assert len(new) == len(old) + 1
    assert ml.load_benchmark("cafe", ann=out).sample(s0.id).gts["pos_entry"].meta["category_ids"] == [7]


def test_ovs_class_deleted_in_an_image_and_category_changes_refused(tmp_path, capsys):
    gt_argv = demo_argv("ovs", with_predictions=False)
    files = _files("ovs", gt_argv)
    bench = ml.load_benchmark("ovs", **files)
    s = bench.samples[0]
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ana") as st:
        st.add_correction(benchmark_key(bench), s.id, "circle", 0, None, tool="delete")
        rows = st.corrections(benchmark_key(bench))
    fixed = corrected_benchmark(bench, rows).sample(s.id)
    assert "circle" not in fixed.gts and fixed.prompt(f"{s.id}:circle").gt is None  # as the loader
    out = tmp_path / "new.json"
    assert main(["review", "apply", "ovs", *gt_argv, "--store", str(db), "--out", str(out)]) == 0
    preds = ml.load_predictions("ovs", bench, pred=demo_argv("ovs")[-1])
    py = corrected_scorer(Scorer(get_kind("ovs"), bench, preds), rows).rescore()
    res = tmp_path / "s.json"
    assert main(["score", "ovs", "--ann", str(out), "--pred", demo_argv("ovs")[-1], "--out", str(res)]) == 0
    assert json.loads(res.read_text())["summary"] == json.loads(json.dumps(py.summary))
    with open_store(db, Role.WRITE, reviewer="ana") as st:
        st.add_correction(benchmark_key(bench), s.id, "square", 0, s.gts["square"].masks[0], category=1)
        with pytest.raises(MasklensError, match="category change is not a correction OVS can store"):
            corrected_benchmark(bench, st.corrections(benchmark_key(bench)))


def test_score_with_corrections_equals_score_of_the_applied_file(tmp_path, capsys):
    gt_argv = demo_argv("pcs", with_predictions=False)
    pred_argv = demo_argv("pcs")[len(gt_argv):]
    bench = ml.load_benchmark("pcs", **_files("pcs", gt_argv))
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ana") as st:
        _correct(st, bench, "gt0")
    assert main(["review", "apply", "pcs", *gt_argv, "--store", str(db), "--out", str(tmp_path / "new")]) == 0
    outs = {}
    for name, argv in (("live", [*gt_argv, "--corrections", str(db)]),
                       ("file", _swap("pcs", gt_argv, tmp_path / "new")), ("plain", gt_argv)):
        assert main(["score", "pcs", *argv, *pred_argv, "--out", str(tmp_path / f"{name}.json")]) == 0
        outs[name] = json.loads((tmp_path / f"{name}.json").read_text())
        outs[name].pop("provenance")  # the inputs named there differ by design: the scores must not
    assert outs["live"] == outs["file"] != outs["plain"]
