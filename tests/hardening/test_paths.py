"""Paths named inside data files stay inside their root: `..`, absolute paths and symlinks that
leave it are refused (file, record and field named) unless --allow-outside-root; ids used as file
names cannot steer a write outside --out. Real files, the real CLI."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from masklens.core.cli import main
from masklens.core.errors import DataFormatError
from masklens.core.files.paths import RootGuard, allow_outside_root, inside_root, safe_name
from masklens.core.kinds.demo import DEMO_DIR

demo = pytest.importorskip("masklens.core.kinds.demo")
DEMO = Path(demo.__file__).resolve().parents[2] / "resources" / "demo"


# ------------------------------------------------------------------ the resolver itself
def test_inside_root_accepts_what_stays_inside(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.png").write_bytes(b"x")
    os.symlink(tmp_path / "a" / "x.png", tmp_path / "link.png")  # a symlink inside the root
    assert inside_root(tmp_path, "a/x.png") == tmp_path / "a" / "x.png"
    assert inside_root(tmp_path, "a/../a/x.png") == tmp_path / "a/../a/x.png"  # path kept as given
    assert inside_root(tmp_path, "link.png") == tmp_path / "link.png"
    assert inside_root(tmp_path, str(tmp_path / "a" / "x.png")) == tmp_path / "a" / "x.png"
    assert inside_root(tmp_path, "not/there/yet.png") == tmp_path / "not/there/yet.png"
    linked_root = tmp_path / "root-link"
    os.symlink(tmp_path / "a", linked_root)  # the root itself may be a symlink
    assert inside_root(linked_root, "x.png") == linked_root / "x.png"


@pytest.mark.parametrize("rel,words", [
    ("../x.png", "a path outside its root"),
    ("a/../../x.png", "a path outside its root"),
    ("/etc/passwd", "an absolute path outside its root"),
    ("out/x.png", "through a symlink"),
    ("out", "through a symlink"),
    ("bad\x00name", "NUL"),
    ("a" * 300 + ".png", "longer than 255 bytes"),
    (7, "expected a file name"),
])
def test_inside_root_refuses_what_leaves(tmp_path, rel, words):
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", root / "out")
    with pytest.raises(DataFormatError) as info:
        inside_root(root, rel, path="data.json", record="[3]", field="mask", what="mask path")
    msg = str(info.value)
    assert words in msg and msg.startswith("data.json, record [3], field 'mask':")
    if not isinstance(rel, int) and "\x00" not in rel and len(rel) < 300:
        assert "allow_outside_root()" in msg  # called from Python: the context manager
        with allow_outside_root():
            assert inside_root(root, rel) == root / rel


def test_root_guard_answers_as_inside_root(tmp_path):
    """Many names under one root (a load's image names): the same path or the same error."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (root / "x.jpg").write_bytes(b"x")
    os.symlink(tmp_path / "elsewhere", root / "out")
    os.symlink(tmp_path / "elsewhere" / "y.jpg", root / "out.jpg")  # a file link leaving the root
    os.symlink(root / "x.jpg", root / "in.jpg")  # a link staying inside
    names = ["x.jpg", "missing.jpg", "sub", "sub/a.jpg", "out", "out.jpg", "out/y.jpg", "in.jpg", "..", ".",
             "../x.jpg", "/etc/passwd", "bad\x00name", "a" * 300, "é.jpg", "x.jpg", "out.jpg"]

    def outcome(fn, name):
        try:
            return fn(name, path="ann.json", record="image id 3", field="file_name", what="image path")
        except DataFormatError as exc:
            return str(exc)

    guard = RootGuard(root)
    assert [outcome(guard.inside, n) for n in names] == [
        outcome(lambda n, **k: inside_root(root, n, **k), n) for n in names]
    gone = RootGuard(tmp_path / "no-such-folder")  # a root that cannot be listed: every name checked
    assert outcome(gone.inside, "x.jpg") == outcome(lambda n, **k: inside_root(tmp_path / "no-such-folder", n, **k),
                                                    "x.jpg")


def test_safe_name_keeps_valid_ids_and_defuses_separators():
    assert safe_name("101") == "101" and safe_name("a-b_c.d") == "a-b_c.d"
    assert safe_name("../../x") == ".._.._x"
    assert safe_name("a\\b\nc\x00") == "a_b_c_"
    assert safe_name("..") == "__" and safe_name("") == "_"


# ------------------------------------------------------------------ HalluSegBench
@pytest.fixture
def hallu(tmp_path):
    root = tmp_path / "hb"
    shutil.copytree(DEMO / "hallusegbench", root)
    return root


def _hallu_items(root: Path) -> list[dict]:
    return json.loads((root / "data.json").read_text())


def _write_items(root: Path, items: list[dict]) -> None:
    (root / "data.json").write_text(json.dumps(items))


def _hallu_argv(root: Path, pred_dir: Path | None) -> list[str]:
    argv = ["--data", str(root / "data.json"), "--root", str(root)]
    return argv + (["--pred-dir", str(pred_dir)] if pred_dir is not None else [])


def test_ann_id_cannot_steer_predict_or_score_outside_their_folders(hallu, tmp_path, capsys):
    items = _hallu_items(hallu)
    items[0]["ann_id"] = "/../../../../../escape"
    _write_items(hallu, items)
    out = tmp_path / "deep" / "er" / "preds"
    rc = main(["predict", "hallusegbench", "--model", "demo", *_hallu_argv(hallu, None),
               "--no-cache", "--quiet", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    escaped = [p for p in tmp_path.rglob("*escape*") if out not in p.parents]
    assert escaped == []
    names = sorted(p.name for p in (out / "orgl_orgi").iterdir())
    assert "0001__.._.._.._.._.._escape_mask.png" in names
    # score reads the same sanitised name back, inside --pred-dir
    rc = main(["score", "hallusegbench", *_hallu_argv(hallu, out), "--out", str(tmp_path / "s.json")])
    assert rc == 0, capsys.readouterr().err
    readouts = json.loads((tmp_path / "s.json").read_text())["samples"]
    assert readouts[0]["missing"] == []


def test_prediction_symlink_leaving_pred_dir_is_refused(hallu, tmp_path, capsys):
    pred = tmp_path / "pred"
    shutil.copytree(hallu / "pred_demo", pred)
    secret = tmp_path / "secret.png"
    shutil.copy(pred / "orgl_orgi" / "0001_101_mask.png", secret)
    (pred / "orgl_orgi" / "0001_101_mask.png").unlink()
    os.symlink(secret, pred / "orgl_orgi" / "0001_101_mask.png")
    argv = ["score", "hallusegbench", *_hallu_argv(hallu, pred), "--out", str(tmp_path / "s.json")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "through a symlink" in err and "orgl_orgi" in err and str(pred) in err
    assert "--allow-outside-root" in err and "Traceback" not in err
    assert main([*argv, "--allow-outside-root"]) == 0


def test_mask_path_outside_root_is_refused_then_allowed(hallu, tmp_path, capsys):
    outside = tmp_path / "elsewhere.png"
    shutil.copy(hallu / "masks" / "factual" / "0001.png", outside)
    for bad in (str(outside), "../elsewhere.png", "masks/../../elsewhere.png"):
        items = _hallu_items(hallu)
        items[0]["factual_mask_path"] = bad
        _write_items(hallu, items)
        argv = ["score", "hallusegbench", *_hallu_argv(hallu, hallu / "pred_demo"),
                "--out", str(tmp_path / "s.json")]
        assert main(argv) == 2, bad
        err = capsys.readouterr().err
        assert f"{hallu / 'data.json'}, record [0] (ann_id=101), field 'factual_mask_path'" in err
        assert "outside its root" in err
        assert main([*argv, "--allow-outside-root"]) == 0
    # a '..' that stays inside the root is fine, and scores the same as the plain path
    items = _hallu_items(DEMO / "hallusegbench")
    _write_items(hallu, items)
    main(["score", "hallusegbench", *_hallu_argv(hallu, hallu / "pred_demo"), "--out", str(tmp_path / "a.json")])
    items[0]["factual_mask_path"] = "images/../masks/factual/0001.png"
    _write_items(hallu, items)
    assert main(["score", "hallusegbench", *_hallu_argv(hallu, hallu / "pred_demo"),
                 "--out", str(tmp_path / "b.json")]) == 0
    summary = [json.loads((tmp_path / f).read_text())["summary"] for f in ("a.json", "b.json")]
    assert summary[0] == summary[1]


def test_image_symlink_leaving_root_is_refused(hallu, tmp_path, capsys):
    shutil.copy(hallu / "images" / "factual" / "0002.png", tmp_path / "outside.png")
    (hallu / "images" / "factual" / "0002.png").unlink()
    os.symlink(tmp_path / "outside.png", hallu / "images" / "factual" / "0002.png")
    assert main(["score", "hallusegbench", *_hallu_argv(hallu, hallu / "pred_demo")]) == 2
    err = capsys.readouterr().err
    assert "field 'factual_image_path'" in err and "through a symlink" in err


# ------------------------------------------------------------------ OVS score maps
def test_ovs_score_map_outside_the_prediction_folder(tmp_path, capsys):
    ovs = tmp_path / "ovs"
    shutil.copytree(DEMO / "ovs", ovs)
    doc = json.loads((ovs / "pred.json").read_text())
    rec = doc["predictions"][0]
    del rec["masks"]
    outside = tmp_path / "map.png"
    cv2.imwrite(str(outside), np.full((256, 320), 200, np.uint8))
    argv = ["score", "ovs", "--ann", str(ovs / "ann.json"), "--pred", str(ovs / "pred.json")]
    for name in ("../map.png", str(outside), "link.png"):
        if name == "link.png":
            os.symlink(outside, ovs / "link.png")
        rec["score_map"] = name
        (ovs / "pred.json").write_text(json.dumps(doc))
        assert main(argv) == 2, name
        err = capsys.readouterr().err
        assert "record [0] (image_id=1, category_id=1), field 'score_map'" in err
        assert "outside its root" in err and "Traceback" not in err
    shutil.copy(outside, ovs / "inside.png")
    rec["score_map"] = "inside.png"
    (ovs / "pred.json").write_text(json.dumps(doc))
    assert main([*argv, "--out", str(tmp_path / "in.json")]) == 0
    rec["score_map"] = "../map.png"
    (ovs / "pred.json").write_text(json.dumps(doc))
    assert main([*argv, "--allow-outside-root", "--out", str(tmp_path / "out.json")]) == 0
    same = [json.loads((tmp_path / f).read_text())["summary"] for f in ("in.json", "out.json")]
    assert same[0] == same[1]


def test_ovs_image_file_name_outside(tmp_path, capsys):
    ovs = tmp_path / "ovs"
    shutil.copytree(DEMO / "ovs", ovs)
    ann = json.loads((ovs / "ann.json").read_text())
    ann["images"][1]["file_name"] = "/etc/hostname"
    (ovs / "ann.json").write_text(json.dumps(ann))
    assert main(["score", "ovs", "--ann", str(ovs / "ann.json"), "--pred", str(ovs / "pred.json")]) == 2
    err = capsys.readouterr().err
    assert f"record image id {ann['images'][1]['id']}, field 'file_name'" in err


# ------------------------------------------------------------------ COCO kinds, report gallery
def test_report_gallery_never_embeds_an_image_from_outside_images(tmp_path, capsys):
    cafe = tmp_path / "cafe"
    shutil.copytree(DEMO / "cafe", cafe)
    marker = tmp_path / "private.png"
    cv2.imwrite(str(marker), np.full((320, 320, 3), (12, 34, 56), np.uint8))
    ann = json.loads((cafe / "ann.json").read_text())
    for img in ann["images"]:
        img["file_name"] = str(marker)
    (cafe / "ann.json").write_text(json.dumps(ann))
    argv = ["report", "cafe", "--ann", str(cafe / "ann.json"), "--images", str(cafe / "images"),
            "--pred", str(cafe / "pred_demo.json"), "--no-sweep", "--out", str(tmp_path / "rep")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "field 'file_name'" in err and "an absolute path outside its root" in err
    assert not (tmp_path / "rep").exists()
    # a symlink inside --images that leads out is refused the same way
    ann = json.loads((DEMO / "cafe" / "ann.json").read_text())
    (cafe / "ann.json").write_text(json.dumps(ann))
    first = ann["images"][0]["file_name"]
    (cafe / "images" / first).unlink()
    os.symlink(marker, cafe / "images" / first)
    assert main(argv) == 2
    assert "through a symlink" in capsys.readouterr().err
    assert main([*argv, "--allow-outside-root"]) == 0


@pytest.mark.parametrize("kind", ["cgebench", "r2sm", "pcs"])
def test_coco_image_names_leaving_images_are_refused(kind, tmp_path, capsys):
    folder = tmp_path / kind
    shutil.copytree(DEMO / kind, folder)
    argv = demo.demo_argv(kind, root=tmp_path)
    ann_files = [Path(argv[i + 1]) for i, a in enumerate(argv) if a in ("--ann", "--gt")]
    for f in ann_files:
        doc = json.loads(f.read_text())
        doc["images"][0]["file_name"] = "../../../outside.png"
        f.write_text(json.dumps(doc))
    assert main(["score", kind, *argv]) == 2
    err = capsys.readouterr().err
    assert "field 'file_name'" in err and "outside its root" in err and "Traceback" not in err


@pytest.mark.parametrize("command", [["score", "hallusegbench"], ["predict", "ovs"],
                                     ["evaluate", "cafe"], ["report", "r2sm"], ["gui"]])
def test_every_reading_command_offers_the_flag_off_by_default(command):
    from masklens.core.cli import build_parser

    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[command[0]]
    if len(command) > 1:
        sub = sub._subparsers._group_actions[0].choices[command[1]]
    action = sub._option_string_actions["--allow-outside-root"]
    assert action.default is False and "refused by default" in action.help


def test_whatever_inside_root_returns_really_is_inside(tmp_path_factory):
    """Property: for paths built from '..', '.', names, symlinks in and out, absolute starts —
    either a refusal, or a path whose real location is under the root."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    base = tmp_path_factory.mktemp("prop")
    root = base / "root"
    (root / "a" / "b").mkdir(parents=True)
    (base / "outside").mkdir()
    os.symlink(base / "outside", root / "a" / "out")
    os.symlink(root / "a" / "b", root / "in")
    real_root = os.path.realpath(root)
    parts = st.sampled_from(["a", "b", "..", ".", "out", "in", "x.png", ""])

    @settings(max_examples=400, deadline=None)
    @given(st.lists(parts, max_size=6), st.booleans())
    def check(segments, absolute):
        rel = "/".join(segments)
        if absolute:
            rel = str(base) + "/" + rel
        try:
            got = inside_root(root, rel)
        except DataFormatError:
            return
        real = os.path.realpath(got)
        assert real == real_root or real.startswith(real_root + os.sep), (rel, real)

    check()


def _hub_snapshot(tmp_path: Path) -> tuple[Path, Path]:
    """A Hugging Face cache repository of the CAFE demo laid out by huggingface_hub's own
    functions; returns (the repository folder, the snapshot folder)."""
    from hub_layout import lay_out

    src = DEMO_DIR / "cafe"
    files = {p.relative_to(src).as_posix(): p for p in sorted(src.rglob("*")) if p.is_file()}
    repo = lay_out(tmp_path / "hub", "owner/cafe", "dataset", "c" * 40, files)
    return repo, repo / "snapshots" / ("c" * 40)


def test_a_hub_snapshot_reads_its_own_blobs(tmp_path):
    repo, snap = _hub_snapshot(tmp_path)
    image = inside_root(snap / "images", "0001.png")
    assert os.path.realpath(image).startswith(os.path.realpath(repo / "blobs"))


def test_a_symlinked_blobs_folder_does_not_widen_the_root(tmp_path, capsys):
    """blobs/ linked to a folder above the user's files: a snapshot file pointing below that
    target is outside the root, for the resolver, `predict` and `report` alike."""
    repo, snap = _hub_snapshot(tmp_path)
    secret = tmp_path / "home" / "private.png"
    secret.parent.mkdir()
    shutil.copy(DEMO_DIR / "cafe" / "images" / "0001.png", secret)
    real_blobs = tmp_path / "real-blobs"
    os.replace(repo / "blobs", real_blobs)
    (repo / "blobs").symlink_to(tmp_path)  # blobs/ is now a link to a folder above home/
    for link in snap.rglob("*"):  # the snapshot's links kept pointing at the same blobs
        if link.is_symlink():
            target = real_blobs / Path(os.readlink(link)).name
            link.unlink()
            link.symlink_to(target)
    image = snap / "images" / "0001.png"
    image.unlink()
    image.symlink_to(repo / "blobs" / "home" / "private.png")  # resolves to tmp_path/home/…
    with pytest.raises(DataFormatError, match="through a symlink"):
        inside_root(snap / "images", "0001.png")
    argv = ["--ann", str(snap / "ann.json"), "--images", str(snap / "images")]
    assert main(["predict", "cafe", *argv, "--model", "demo", "--no-cache", "--quiet",
                 "--out", str(tmp_path / "p.json")]) == 2
    err = capsys.readouterr().err
    assert "leads outside its root" in err and "Traceback" not in err
    assert main(["report", "cafe", *argv, "--pred", str(snap / "pred_demo.json"), "--no-sweep",
                 "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "leads outside its root" in err and "Traceback" not in err
    assert not (tmp_path / "p.json").exists() and not (tmp_path / "r").exists()
