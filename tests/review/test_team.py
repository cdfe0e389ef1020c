"""Review as a team: queues with an overlap (`review assign`, `review queue`), merged stores whose
corrections conflict (`review merge` exit 1, listed), agreement naming differing corrections,
and corrected scoring that re-reads only the corrected samples."""

import json

import numpy as np
import pytest

import masklens.core as ml
from masklens.core.cli import main
from masklens.core.errors import MasklensError
from masklens.core.kinds.demo import demo_argv, demo_files
from masklens.core.masks import Mask
from masklens.core.review.assign import split_queues
from masklens.core.review.corrections import corrected_scorer
from masklens.core.review.locations import benchmark_key
from masklens.core.review.store import Role, open_store
from masklens.core.scoring.contract import Scorer, get_kind


def test_split_queues_overlap_and_seed():
    ids = [f"s{i}" for i in range(50)]
    q = split_queues(ids, ["ana", "ben", "eve"], overlap=0.1, seed=3)
    shared = [{i.sample_id for i in items if i.shared} for items in q.values()]
    assert shared[0] == shared[1] == shared[2] and len(shared[0]) == 5
    own = [[i.sample_id for i in items if not i.shared] for items in q.values()]
    assert sorted(sum(own, [])) == sorted(set(ids) - shared[0])  # each other sample once
    assert max(map(len, own)) - min(map(len, own)) <= 1
    assert split_queues(ids, ["ana", "ben", "eve"], overlap=0.1, seed=3) == q
    assert split_queues(ids, ["ana", "ben", "eve"], overlap=0.1, seed=4) != q
    assert all(not i.shared for items in split_queues(ids, ["a", "b"]).values() for i in items)
    with pytest.raises(MasklensError, match="overlap must be in"):
        split_queues(ids, ["a"], overlap=1.5)
    with pytest.raises(MasklensError, match="named twice"):
        split_queues(ids, ["a", "a"])


def test_assign_cli_stores_queues_and_progress(tmp_path, capsys):
    db = tmp_path / "team.sqlite"
    argv = demo_argv("cafe", with_predictions=False)
    assert main(["review", "assign", "cafe", *argv, "--store", str(db), "--reviewers", "ana,ben,eve",
                 "--overlap", "0.2", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert "assigned 18 samples of cafe:ann to 3 reviewer(s), 4 shared by all" in out
    bench = ml.load_benchmark("cafe", **demo_files("cafe"))
    with open_store(db, Role.WRITE, reviewer="ana") as st:
        queues = {r: st.queue("cafe:ann", r) for r in ("ana", "ben", "eve")}
        assert set().union(*queues.values()) == {s.id for s in bench.samples}
        assert st.queue("cafe:ann") == queues["ana"]  # the store's own reviewer
        first = queues["ana"][0]
        st.record("cafe:ann", first, "fine")
        st.add_correction("cafe:ann", queues["ana"][1], "target", 0, None, tool="delete")
        assert st.progress("cafe:ann") == (2, len(queues["ana"]))
    assert main(["review", "queue", str(db), "--benchmark", "cafe:ann"]) == 0
    table = capsys.readouterr().out
    assert "ana" in table and f"{len(queues['ana'])}" in table and "eve" in table
    assert main(["review", "queue", str(db), "--benchmark", "cafe:ann", "--reviewer", "ben"]) == 0
    assert capsys.readouterr().out.split() == queues["ben"]
    assert main(["review", "queue", str(db), "--benchmark", "cafe:other"]) == 2
    assert "no assignment for cafe:other" in capsys.readouterr().err


def _box(n, frac):
    a = np.zeros((n, n), bool)
    a[: int(n * frac), : int(n * frac)] = True
    return Mask.from_array(a)


def test_merge_cli_lists_conflicts_and_agreement_names_them(tmp_path, capsys):
    for who, frac in (("ana", 0.5), ("ben", 0.25)):
        with open_store(tmp_path / f"{who}.sqlite", Role.WRITE, reviewer=who) as st:
            st.record("k:b", "s1", "gt_wrong")
            st.add_correction("k:b", "s1", "gt", 0, _box(8, frac), tool="brush")
            st.add_correction("k:b", "s2", "gt", 0, _box(8, 0.5), tool="brush")  # the same: agreed
    merged = tmp_path / "all.sqlite"
    rc = main(["review", "merge", str(merged), str(tmp_path / "ana.sqlite"), str(tmp_path / "ben.sqlite")])
    captured = capsys.readouterr()
    assert rc == 1
    assert captured.out.splitlines() == [
        "conflict: k:b: sample s1, gt instance 0: ana: new mask of area 16 (brush); "
        "ben: new mask of area 4 (brush)"]
    assert "1 instance(s) corrected differently" in captured.err
    with open_store(merged, Role.WRITE) as st:  # both kept, none chosen
        assert {c.reviewer for c in st.corrections("k:b") if c.sample_id == "s1"} == {"ana", "ben"}
    assert main(["review", "agreement", str(merged), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["corrections_differ"] == [
        {"benchmark": "k:b", "sample_id": "s1", "gt_key": "gt", "instance": 0, "reviewers": ["ana", "ben"]}]
    assert main(["review", "agreement", str(tmp_path / "ana.sqlite"), str(tmp_path / "ben.sqlite")]) == 0
    assert "ground-truth instances corrected differently: 1" in capsys.readouterr().out


def test_corrected_scorer_rereads_only_the_corrected_samples(monkeypatch):
    kind = get_kind("pcs")
    files = demo_files("pcs")
    bench = ml.load_benchmark("pcs", **files)
    preds = ml.load_predictions("pcs", bench, **files)
    scorer = Scorer(kind, bench, preds)
    key = benchmark_key(bench)
    picked = [bench.samples[3], bench.samples[4], bench.samples[40]]
    from masklens.core.review.corrections import Correction

    rows = [Correction(key, s.id, "gt0", 0 if s.gts["gt0"].masks else None,
                       _box(s.gts["gt0"].height, 0.5) if s.gts["gt0"].height == s.gts["gt0"].width
                       else Mask.empty(s.gts["gt0"].height, s.gts["gt0"].width),
                       "brush", "ana", f"2026-01-01T00:00:0{i}.000Z", "", "", f"u{i}")
            for i, s in enumerate(picked)]
    seen = []
    real = type(kind).all_overlaps

    def spy(self, samples, predictions, progress=None):
        seen.append([s.id for s in samples])
        return real(self, samples, predictions, progress)

    monkeypatch.setattr(type(kind), "all_overlaps", spy)
    new = corrected_scorer(scorer, rows)
    assert seen == [[picked[0].id, picked[1].id], [picked[2].id]]  # runs of consecutive samples
    shared = [i for i, (a, b) in enumerate(zip(scorer.overlaps, new.overlaps, strict=True)) if a is b]
    assert shared == [i for i in range(len(bench.samples)) if i not in (3, 4, 40)]
    seen.clear()
    full = Scorer(kind, new.benchmark, preds).rescore().to_json()
    assert new.rescore().to_json() == full
    assert scorer.benchmark is bench and scorer.rescore().to_json() != full


def _verdict(bench, sid, verdict, reviewer, prompt=""):
    from masklens.core.review.verdicts import Verdict

    return Verdict(benchmark=bench, sample_id=sid, prompt_id=prompt, verdict=verdict, note="",
                   reviewer=reviewer, time="2026-01-01T00:00:00Z", uid=f"{sid}{reviewer}{prompt}")


def test_disagreements_lists_differing_verdicts_and_corrections_side_by_side(tmp_path):
    from masklens.core.review.agreement import disagreements

    b = "cafe:demo"
    verdicts = [
        _verdict(b, "s1", "fine", "ana"), _verdict(b, "s1", "fine", "ben"),  # agree
        _verdict(b, "s2", "gt_wrong", "ana"), _verdict(b, "s2", "fine", "ben"),  # differ
        _verdict(b, "s3", "fine", "ana", "p1"), _verdict(b, "s3", "model_wrong", "ben", "p2"),  # other targets
        _verdict(b, "s5", "gt_wrong", "ana"),  # one reviewer only
    ]
    a = np.zeros((8, 8), np.uint8)
    a[:4] = 1
    c = np.zeros((8, 8), np.uint8)
    c[:, :4] = 1
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ana") as st:
        st.add_correction(b, "s4", "gt", 0, Mask.from_array(a), tool="brush")
        st.add_correction(b, "s4", "gt", 0, Mask.from_array(c), tool="polygon", reviewer="ben")
        st.add_correction(b, "s6", "gt", 0, Mask.from_array(a), tool="brush")
        st.add_correction(b, "s6", "gt", 0, Mask.from_array(a), tool="model", reviewer="ben")  # same mask
        rows = st.corrections(b)
    got = disagreements(verdicts, rows)
    assert set(got) == {"s2", "s4"}
    assert got["s2"] == {"ana": "gt_wrong", "ben": "fine"}
    assert got["s4"] == {"ana": "corrected gt instance 0 (area 32, brush)",
                         "ben": "corrected gt instance 0 (area 32, polygon)"}


def test_export_review_writes_verdicts_and_corrections_as_json(tmp_path):
    from masklens.core.review.apply import export_review

    a = np.zeros((8, 8), np.uint8)
    a[:4] = 1
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ana") as st:
        v = st.record("cafe:demo", "s1", "gt_wrong")
        c = st.add_correction("cafe:demo", "s1", "gt", 0, Mask.from_array(a), tool="brush", verdict_uid=v.uid)
        st.add_correction("other:x", "s1", "gt", None, Mask.from_array(a))
        out = export_review(st, tmp_path / "e.json", "cafe:demo")
        with pytest.raises(MasklensError, match="must end in .json"):
            export_review(st, tmp_path / "e.csv", "cafe:demo")
    got = json.loads(out.read_text())
    assert [x["uid"] for x in got["verdicts"]] == [v.uid]
    assert [x["uid"] for x in got["corrections"]] == [c.uid]
    assert Mask.from_coco(got["corrections"][0]["mask"]) == Mask.from_array(a)
    assert got["corrections"][0]["verdict_uid"] == v.uid
