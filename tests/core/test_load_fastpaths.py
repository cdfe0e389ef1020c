"""The fast SA-Co/Gold and CAFE loading paths (batch RLE check, masks built per file, records
read inline, later annotator files read by worker processes, prediction files read ahead)
give exactly what the plain per-record forms give — same samples, masks, flags, scores, and on
hostile files the same error (file, record, field, wording)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from masklens.core.errors import DataFormatError
from masklens.core.kinds.common.cgf1.io import (
    exhaustive,
    image_path,
    read_results,
    results_digest,
    text_of,
)
from masklens.core.kinds.common.cgf1.results_ahead import ResultsAhead
from masklens.core.kinds.common.coco import load_coco, load_results
from masklens.core.kinds.pcs.annotator_files import AnnotatorColumns, AnnotatorFile, read_annotators
from masklens.core.kinds.pcs.kind import load_pcs
from masklens.core.masks import Mask
from masklens.core.runtime.worker_processes import workers_available
from masklens.core.schema import GroundTruth, ImageRef, Prompt, Role, Sample
from masklens.core.scoring.contract import get_kind

H, W = 6, 7


def plain_load_pcs(paths: list[Path]) -> list[Sample]:
    """SA-Co/Gold loading as it was before the fast paths: every mask through Mask.from_coco,
    in the loader's order of checks."""
    datasets = [load_coco(p) for p in paths]
    base = datasets[0]
    for ds in datasets[1:]:
        extra = [i for i in ds.images if i not in base.images]
        gone = [i for i in base.images if i not in ds.images]
        if extra or gone:
            raise DataFormatError(
                f"{'extra' if extra else 'missing'} image entry: annotator files must list the "
                f"same image entries as {base.path}", path=ds.path, record=f"image id {(extra or gone)[0]!r}")
    samples = []
    for img in base.images.values():
        text = text_of(img, base.path, required=False)
        flags, gts = [], {}
        for a, ds in enumerate(datasets):
            other = ds.images[img.id]
            if (other.height, other.width) != (img.height, img.width):
                raise DataFormatError(
                    f"size {other.height}x{other.width} differs from {img.height}x{img.width} in {base.path}",
                    path=ds.path, record=f"image id {img.id}")
            flags.append(exhaustive(other, ds.path))
            masks, crowd, cats = [], [], []
            for ann in ds.annotations.get(other.id, []):
                flag = ann.get("iscrowd", 0)
                if not (isinstance(flag, bool) or flag in (0, 1)):
                    raise DataFormatError(f"expected 0 or 1, got {flag!r}", path=ds.path,
                                          record=f"annotation id {ann.get('id', '?')}", field="iscrowd")
                m = ds.mask_of(ann)
                if m.shape != (other.height, other.width):
                    raise DataFormatError(
                        f"mask size {m.height}x{m.width} differs from its image's {other.height}x{other.width}",
                        path=ds.path, record=f"annotation id {ann.get('id', '?')}", field="segmentation")
                masks.append(m)
                crowd.append(bool(flag))
                cats.append(ann.get("category_id"))
            gts[f"gt{a}"] = GroundTruth(f"gt{a}", masks, other.height, other.width, label=text, crowd=crowd,
                                        meta={"file": str(ds.path), "category_ids": cats})
        role = Role.POSITIVE if any(not c for c in gts["gt0"].crowd) else Role.NEGATIVE
        prompt = Prompt(str(img.id), text, role, "image", "gt0", source_id=img.id,
                        meta={"exhaustive": all(flags)})
        ref = ImageRef("image", image_path(None, img, datasets[-1].path), img.height, img.width, img.id)
        samples.append(Sample(str(img.id), {"image": ref}, gts, [prompt], "all",
                              {"exhaustive": all(flags), "file_name": img.file_name}))
    return samples


def outcome(fn, *args) -> Any:
    try:
        return fn(*args)
    except DataFormatError as exc:
        return ("error", str(exc))


def rle(rng: np.random.Generator, h: int = H, w: int = W) -> dict[str, Any]:
    return Mask.from_array(rng.random((h, w)) < 0.4).to_coco()


#: ways a segmentation can be bad, odd or unusual (None: a plain valid RLE)
SEGMENTATIONS = [None, None, None, "polygon", "uncompressed", "flip", "cut", "append", "bigger", "size-bool",
                 "size-float", "size-zero", "non-ascii", "counts-int", "missing", "huge"]  # fmt: skip


def segmentation(rng: np.random.Generator, how: str | None) -> Any:
    seg = rle(rng)
    if how == "polygon":
        return [[0.5, 0.5, 5.0, 0.5, 3.0, 4.5]]
    if how == "uncompressed":
        return {"size": [H, W], "counts": [H * W - 3, 3]}
    if how in ("flip", "cut", "append"):
        c = seg["counts"]
        i = int(rng.integers(0, len(c)))
        seg["counts"] = {"flip": c[:i] + chr(int(rng.integers(48, 112))) + c[i + 1:], "cut": c[:i],
                         "append": c + chr(int(rng.integers(48, 112)))}[how]  # fmt: skip
    elif how == "bigger":
        seg = rle(rng, H + 1, W)
    elif how == "size-bool":
        seg["size"] = [True, W]
    elif how == "size-float":
        seg["size"] = [float(H), W]
    elif how == "size-zero":
        seg = {"size": [0, W], "counts": ""}
    elif how == "non-ascii":
        seg["counts"] = seg["counts"][:-1] + "é"
    elif how == "counts-int":
        seg["counts"] = 5
    elif how == "missing":
        return None
    elif how == "huge":
        seg["size"] = [1 << 20, 1 << 20]
    return seg


def write_pcs(tmp: Path, seed: int, faults: dict[str, Any]) -> list[Path]:
    rng = np.random.default_rng(seed)
    n_img = int(rng.integers(1, 5))
    paths = []
    for a in range(int(rng.integers(1, 4))):
        images = [{"id": i + 1, "file_name": f"im{i}.jpg", "height": H, "width": W, "text_input": f"thing {i}",
                   "is_instance_exhaustive": bool(rng.random() < 0.8)} for i in range(n_img)]  # fmt: skip
        anns = []
        for i in range(n_img):
            for _ in range(int(rng.integers(0, 4))):
                ann = {"id": len(anns) + 1, "image_id": i + 1, "category_id": int(rng.integers(1, 3)),
                       "iscrowd": int(rng.random() < 0.2), "segmentation": rle(rng)}  # fmt: skip
                anns.append(ann)
        if a == faults["file"] and anns:
            victim = anns[faults["ann"] % len(anns)]
            if faults["seg"] is not None:
                victim["segmentation"] = segmentation(rng, faults["seg"])
            if faults["crowd"] is not None:
                victim["iscrowd"] = faults["crowd"]
        if a == faults["file"]:
            img = images[faults["ann"] % n_img]
            if faults["image"] == "exhaustive":
                img["is_instance_exhaustive"] = "yes"
            elif faults["image"] == "size" and a > 0:
                img["height"] = H + 1
            elif faults["image"] == "text":
                img["text_input"] = 7
            elif faults["image"] == "drop" and a > 0:
                images.remove(img)
        p = tmp / f"gt{a}.json"
        p.write_text(json.dumps({"images": images, "annotations": anns}))
        paths.append(p)
    return paths


FAULTS = st.fixed_dictionaries({
    "file": st.integers(0, 2), "ann": st.integers(0, 20),
    "seg": st.sampled_from(SEGMENTATIONS), "crowd": st.sampled_from([None, None, True, 0.0, 2, "1", [1], False, 1.0]),
    "image": st.sampled_from([None, None, "exhaustive", "size", "text", "drop"]),
})  # fmt: skip


def same_samples(fast: list[Sample], plain: list[Sample]) -> None:
    assert len(fast) == len(plain)
    for f, p in zip(fast, plain, strict=True):
        assert (f.id, f.images, f.prompts, f.group, f.meta) == (p.id, p.images, p.prompts, p.group, p.meta)
        assert list(f.gts) == list(p.gts)
        for k, g in f.gts.items():
            q = p.gts[k]
            assert (g.key, g.height, g.width, g.label, g.crowd, g.meta) == (q.key, q.height, q.width, q.label,
                                                                             q.crowd, q.meta)  # fmt: skip
            assert [(m.shape, m.rle["counts"]) for m in g.masks] == [(m.shape, m.rle["counts"]) for m in q.masks]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 10**6), FAULTS)
def test_load_pcs_equals_the_plain_loader(tmp_path, seed, faults) -> None:
    paths = write_pcs(tmp_path, seed, faults)
    fast = outcome(lambda: load_pcs(paths).samples)
    plain = outcome(plain_load_pcs, paths)
    event("refused" if isinstance(plain, tuple) else "loaded")
    if isinstance(plain, tuple) or isinstance(fast, tuple):
        assert fast == plain
    else:
        same_samples(fast, plain)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 10**6), FAULTS)
def test_load_pcs_in_worker_processes_equals_the_plain_loader(tmp_path, seed, faults) -> None:
    """The later annotator files read by worker processes: the same samples, or the same error
    (a file with a problem is read again here)."""
    paths = write_pcs(tmp_path, seed, faults)
    fast = outcome(lambda: load_pcs(paths, workers=True).samples)
    plain = outcome(plain_load_pcs, paths)
    if isinstance(plain, tuple) or isinstance(fast, tuple):
        assert fast == plain
    else:
        same_samples(fast, plain)


@pytest.mark.skipif(not workers_available(), reason="worker processes need a second CPU and a Python")
def test_worker_processes_read_the_files_of_a_valid_subset(tmp_path) -> None:
    paths = write_pcs(tmp_path, 11, {"file": 0, "ann": 0, "seg": None, "crowd": None, "image": None})
    paths += [tmp_path / "gt1.json", tmp_path / "gt2.json"][len(paths) - 1 :]
    for p in paths[1:]:
        if not p.exists():
            p.write_bytes(paths[0].read_bytes())
    assert [type(r) for r in read_annotators(paths, workers=True)] == [AnnotatorColumns] * 3
    same_samples(load_pcs(paths, workers=True).samples, plain_load_pcs(paths))
    broken = json.loads(paths[2].read_text())
    broken["images"][0]["is_instance_exhaustive"] = "yes"
    paths[2].write_text(json.dumps(broken))
    assert type(read_annotators(paths, workers=True)[2]) is AnnotatorFile  # read again here
    assert outcome(lambda: load_pcs(paths, workers=True)) == outcome(plain_load_pcs, paths)


@pytest.mark.skipif(not workers_available(), reason="worker processes need a second CPU and a Python")
def test_a_subset_is_read_here_where_no_temporary_file_can_be_made(tmp_path, monkeypatch) -> None:
    paths = write_pcs(tmp_path, 5, {"file": 0, "ann": 0, "seg": None, "crowd": None, "image": None})
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))
    assert [type(r) for r in read_annotators(paths, workers=True)] == [AnnotatorColumns] * len(paths)
    same_samples(load_pcs(paths, workers=True).samples, plain_load_pcs(paths))


# ------------------------------------------------------------------ predictions
RECORD_FAULTS = [None, None, "key-unknown", "key-bool", "key-missing", "score-nan", "score-str", "score-int",
                 "score-huge", "not-a-dict", *[s for s in SEGMENTATIONS if s]]  # fmt: skip


SIZES: dict[Any, tuple[int, int]] = {1: (H, W), 2: (H, W), "y": (H, W), "x": (H + 2, W)}
RESULTS = st.tuples(st.integers(0, 10**6), st.lists(st.tuples(st.integers(0, 30), st.sampled_from(RECORD_FAULTS)),
                                                    max_size=3), st.booleans())  # fmt: skip


def write_results(tmp: Path, seed: int, faults: list[tuple[int, str | None]], wrapped: bool) -> Path:
    """A results file of up to 8 records on the images of :data:`SIZES` (integer and string ids,
    some without a category, a few of image "x", whose size differs: resized), with ``faults``."""
    rng = np.random.default_rng(seed)
    recs: list[Any] = []
    for _ in range(int(rng.integers(0, 8))):
        rec = {"image_id": [1, 2, "y"][int(rng.integers(0, 3))], "segmentation": rle(rng), "score": float(rng.random())}
        if rng.random() < 0.7:
            rec["category_id"] = int(rng.integers(1, 3))
        recs.append(rec)
    for where, how in faults:
        if not recs:
            break
        rec = recs[where % len(recs)]
        if not isinstance(rec, dict):
            continue
        if how == "key-unknown":
            rec["image_id"] = 99
        elif how == "key-bool":
            rec["image_id"] = True
        elif how == "key-missing":
            rec.pop("image_id", None)
        elif how and how.startswith("score-"):
            rec["score"] = {"score-nan": float("nan"), "score-str": "0.5", "score-int": 1,
                            "score-huge": 2**1100}[how]  # fmt: skip
        elif how == "not-a-dict":
            recs[where % len(recs)] = [1, 2]
        elif how is not None:
            seg = segmentation(rng, how)
            if seg is None:
                rec.pop("segmentation", None)
            else:
                rec["segmentation"] = seg
    if recs and isinstance(recs[0], dict) and rng.random() < 0.3:
        recs[0]["image_id"] = "x"  # a prediction of another size: resized
    p = tmp / "pred.json"
    p.write_text(json.dumps({"annotations": recs} if wrapped else recs))
    return p


def read(p: Path, **digest: Any) -> list[tuple[Any, list[int], bytes, float, Any]]:
    """:func:`read_results`, each mask as its RLE size list and counts."""
    return [(k, m.rle["size"], m.rle["counts"], s, c) for k, m, s, c in read_results(p, SIZES, **digest)]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(RESULTS)
def test_read_results_equals_load_results(tmp_path, results) -> None:
    p = write_results(tmp_path, *results)

    def plain() -> list[tuple[Any, list[int], bytes, float, Any]]:
        def size_of(r):
            key = r.get("image_id")
            return SIZES.get(key) if type(key) in (int, str) else None

        return [(r.keys["image_id"], r.mask.rle["size"], r.mask.rle["counts"], r.score, r.raw.get("category_id"))
                for r in load_results(p, key_fields=("image_id",), size_of=size_of)]  # fmt: skip

    want = outcome(plain)
    event("refused" if isinstance(want, tuple) else "read")
    assert outcome(read, p) == want


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(RESULTS)
def test_read_results_from_a_digest_equals_the_plain_read(tmp_path, results) -> None:
    """Given the file's digest (read without the image sizes), read_results gives what it gives
    reading the file: the same records, or the same error; a file with any problem has none."""
    p = write_results(tmp_path, *results)
    want = outcome(read, p)
    digest = results_digest(p)
    event("digest" if digest is not None else "no digest")
    if digest is None:
        return
    assert outcome(lambda: read(p, digest=digest)) == want
    if isinstance(want, tuple):  # an image id of no image: read again, the plain reading's error
        assert any(k not in SIZES for k in digest.ids)


@pytest.mark.skipif(not workers_available(), reason="worker processes need a second CPU and a Python")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(RESULTS)
def test_results_read_ahead_by_a_worker_equal_the_plain_read(tmp_path, results) -> None:
    p = write_results(tmp_path, *results)
    ahead = ResultsAhead(p)
    digest = ahead.digest()
    assert digest is None or outcome(lambda: read(p, digest=digest)) == outcome(read, p)
    assert (digest is None) == (results_digest(p) is None)


def pcs_predictions(bench: Any, p: Path, ahead: ResultsAhead | None) -> Any:
    """The kind's prediction set read with ``ahead`` (or without), as plain values."""
    given = {"ahead": ahead} if ahead is not None else {}
    preds = get_kind("pcs").load_predictions(bench, pred=p, **given)
    return preds.provenance, [(pid, [(i.mask.rle["size"], i.mask.rle["counts"], i.score, i.category)
                                     for i in pr.instances]) for pid, pr in preds.by_prompt.items()]  # fmt: skip


@pytest.mark.skipif(not workers_available(), reason="worker processes need a second CPU and a Python")
def test_pcs_predictions_read_ahead_equal_the_plain_read_or_its_error(tmp_path) -> None:
    """Through the kind: a valid file read ahead gives the same prediction set; one whose counts
    run past the mask's end gives the same one-line error, naming file, record and field."""
    bench = load_pcs(write_pcs(tmp_path, 3, {"file": 0, "ann": 0, "seg": None, "crowd": None, "image": None}))
    rng = np.random.default_rng(4)
    recs = [{"image_id": 1 + i % len(bench.samples), "category_id": 1, "segmentation": rle(rng),
             "score": float(rng.random())} for i in range(6)]  # fmt: skip
    recs[0]["segmentation"] = rle(rng, H + 3, W)  # resized to its image's size
    p = tmp_path / "pred.json"
    p.write_text(json.dumps(recs))
    ahead = ResultsAhead(p)
    assert pcs_predictions(bench, p, ahead) == pcs_predictions(bench, p, None)
    assert ahead.digest() is None  # used once, then ended
    recs[2]["segmentation"]["counts"] += "0"
    p.write_text(json.dumps(recs))
    assert ResultsAhead(p).digest() is None
    error = outcome(pcs_predictions, bench, p, ResultsAhead(p))
    assert error == outcome(pcs_predictions, bench, p, None)
    assert error[0] == "error" and str(p) in error[1] and "[2]" in error[1] and "\n" not in error[1]
