"""An image's decoded size is checked against the budget (MASKLENS_MAX_IMAGE_BYTES) from its
header, before any pixel is decoded: a 420 KB PNG declaring 12000 × 12000 is one clear line
naming the image and the limit, not minutes at 2.2 GB with Pillow's warnings. An image whose
size differs from the annotation's is said once. Real files, the real decoder and CLI."""

from __future__ import annotations

import shutil
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from masklens.core.cli import main
from masklens.core.errors import DataFormatError
from masklens.core.files.images import read_image
from masklens.core.kinds.demo import DEMO_DIR, demo_argv


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def grey_png(path: Path, side: int) -> Path:
    """A real, valid all-black grey PNG of side × side pixels, written row by row (small file)."""
    z = zlib.compressobj(9)
    row = b"\0" * (side + 1)
    body = b"".join(z.compress(row) for _ in range(side)) + z.flush()
    ihdr = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", body) + _chunk(b"IEND", b""))
    return path


def test_a_small_png_declaring_12000_squared_is_refused_before_decoding(tmp_path, recwarn):
    png = grey_png(tmp_path / "bomb.png", 12000)
    assert png.stat().st_size < 1 << 20
    with pytest.raises(DataFormatError) as info:
        read_image(png)
    msg = str(info.value)
    assert str(png) in msg and "12000 × 12000" in msg and "limit of 256 MiB per image" in msg
    assert "MASKLENS_MAX_IMAGE_BYTES" in msg
    assert not [w for w in recwarn if "DecompressionBomb" in type(w.message).__name__]


def test_the_budget_follows_the_environment(tmp_path, monkeypatch):
    img = tmp_path / "a.png"
    cv2.imwrite(str(img), np.zeros((40, 50, 3), np.uint8))
    monkeypatch.setenv("MASKLENS_MAX_IMAGE_BYTES", str(40 * 50 * 3))
    assert read_image(img).shape == (40, 50, 3)  # exactly the budget: decoded
    monkeypatch.setenv("MASKLENS_MAX_IMAGE_BYTES", str(40 * 50 * 3 - 1))
    with pytest.raises(DataFormatError, match="40 × 50 pixels"):
        read_image(img)


def test_predict_names_the_image_over_the_budget(tmp_path, monkeypatch, capsys):
    root = tmp_path / "demo"
    shutil.copytree(DEMO_DIR / "cafe", root / "cafe")
    monkeypatch.setenv("MASKLENS_MAX_IMAGE_BYTES", "1000")
    rc = main(["predict", "cafe", "--model", "demo", *demo_argv("cafe", with_predictions=False, root=root),
               "--no-cache", "--quiet", "--out", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert rc != 0 and "Traceback" not in err
    assert "MiB decoded, more than the limit" in err and str(root / "cafe" / "images") in err


def test_predict_says_once_when_images_differ_in_size_from_the_annotation(tmp_path, capsys, monkeypatch):
    import masklens.core.inference.runner as runner

    monkeypatch.setattr(runner, "_size_warned", False)
    root = tmp_path / "demo"
    shutil.copytree(DEMO_DIR / "cafe", root / "cafe")
    for f in sorted((root / "cafe" / "images").iterdir())[:2]:
        im = cv2.imread(str(f), cv2.IMREAD_UNCHANGED)
        cv2.imwrite(str(f), cv2.resize(im, (im.shape[1] // 2, im.shape[0] // 2)))
    rc = main(["predict", "cafe", "--model", "demo", *demo_argv("cafe", with_predictions=False, root=root),
               "--no-cache", "--quiet", "--out", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert err.count("but the annotation records") == 1 and "further such images: in the log" in err
