"""The decoded-size budget per batch (MASKLENS_MAX_BATCH_BYTES, core/files/image_batches.py):
the images decoded together (a Ray actor call of `predict --ray`) are summed from their headers
before any pixel is decoded; a batch over the budget is split (said, naming the images and the
limit), an image over it alone is refused in one line. Pillow's own warnings go to the log.
Real small PNGs, the real decoder and CLI."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from masklens.core.cli import main
from masklens.core.errors import DataFormatError
from masklens.core.kinds.demo import DEMO_DIR, demo_argv


def _pngs(tmp_path: Path, sides: list[int]) -> list[Path]:
    out = []
    for i, side in enumerate(sides):
        p = tmp_path / f"img{i}.png"
        cv2.imwrite(str(p), np.zeros((side, side, 3), np.uint8))
        out.append(p)
    return out


@pytest.fixture(autouse=True)
def _say_again(monkeypatch):
    import masklens.core.files.image_batches as batches

    monkeypatch.setattr(batches, "_said", False)


def test_a_batch_over_the_budget_is_split_and_said(tmp_path, monkeypatch, capsys):
    from masklens.core.files.image_batches import plan_batches

    paths = _pngs(tmp_path, [20, 20, 20, 20, 20])  # 1200 bytes decoded each
    monkeypatch.setenv("MASKLENS_MAX_BATCH_BYTES", "2500")
    plan = plan_batches(paths, 4, what="Ray batch")
    assert plan.batches == [[0, 1], [2, 3], [4]]
    assert len(plan.splits) == 2 and "img0.png, img1.png" in plan.splits[0]
    assert "split before img2.png" in plan.splits[0] and "MASKLENS_MAX_BATCH_BYTES" in plan.splits[0]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "split before img2.png" in err and "1 more: in the log" in err
    monkeypatch.setenv("MASKLENS_MAX_BATCH_BYTES", str(1 << 30))
    assert plan_batches(paths, 4).batches == [[0, 1, 2, 3], [4]]  # the count alone: no split said
    assert capsys.readouterr().err == ""


def test_mixed_sizes_are_packed_in_order(tmp_path, monkeypatch):
    from masklens.core.files.image_batches import plan_batches

    paths = _pngs(tmp_path, [10, 30, 10, 10, 30])  # 300, 2700, 300, 300, 2700 bytes
    monkeypatch.setenv("MASKLENS_MAX_BATCH_BYTES", "3000")
    assert plan_batches(paths, 8).batches == [[0, 1], [2, 3], [4]]


def test_an_image_over_the_batch_budget_is_refused_naming_it_and_the_limit(tmp_path, monkeypatch):
    from masklens.core.files.image_batches import plan_batches

    paths = _pngs(tmp_path, [20, 1100])  # 3.5 MiB decoded
    monkeypatch.setenv("MASKLENS_MAX_BATCH_BYTES", str(2 << 20))
    with pytest.raises(DataFormatError) as info:
        plan_batches(paths, 4, what="Ray batch")
    msg = str(info.value)
    assert str(paths[1]) in msg and "limit of 2 MiB per Ray batch" in msg and "MASKLENS_MAX_BATCH_BYTES" in msg


def test_the_per_image_budget_still_applies_first(tmp_path, monkeypatch):
    from masklens.core.files.image_batches import plan_batches

    paths = _pngs(tmp_path, [20, 40])
    monkeypatch.setenv("MASKLENS_MAX_IMAGE_BYTES", "2000")
    with pytest.raises(DataFormatError, match="per image"):
        plan_batches(paths, 4)


def test_predict_on_ray_refuses_before_ray_starts(tmp_path, monkeypatch, capsys):
    """`predict --ray` plans its batches from the headers before Ray is started: a demo image
    over the batch budget is one line naming it and the limit, exit 2, no traceback."""
    pytest.importorskip("ray.data")
    import ray

    root = tmp_path / "demo"
    shutil.copytree(DEMO_DIR / "cafe", root / "cafe")
    monkeypatch.setenv("MASKLENS_MAX_BATCH_BYTES", "1000")
    rc = main(["predict", "cafe", "--model", "demo", *demo_argv("cafe", with_predictions=False, root=root),
               "--no-cache", "--quiet", "--ray", "--out", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) <= 2
    assert "per Ray batch" in err and str(root / "cafe" / "images") in err
    assert not ray.is_initialized() and not (tmp_path / "p.json").exists()


def test_pillow_warnings_go_to_the_log_not_the_terminal(tmp_path):
    """A palette PNG with byte transparency made Pillow print 'Palette images with Transparency
    expressed in bytes …' on stderr for every read; now it is a line of the log."""
    from PIL import Image

    png = tmp_path / "p.png"
    im = Image.fromarray(np.zeros((10, 10), np.uint8), "P")
    im.putpalette([0, 0, 0, 255, 0, 0] * 128)
    im.save(png, transparency=bytes([0, 255, 128]))
    logs = tmp_path / "logs"
    code = ("from masklens.core.runtime import logs; logs.configure()\n"
            "from masklens.core.files.images import read_image\n"
            f"print(read_image({str(png)!r}).shape)\n")
    env = {**__import__("os").environ, "MASKLENS_LOG_DIR": str(logs)}
    done = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "(10, 10, 3)"
    assert "Palette images" not in done.stderr and "Warning" not in done.stderr, done.stderr
    assert "Palette images with Transparency" in "".join(p.read_text() for p in logs.glob("*.log*"))
