"""Small things a user meets: `export` takes the --allow-outside-root its hint names; a COCO
``file_name: true`` (CGEBench, R2SM) is refused naming the record; a PNG with a broken IHDR is one
clean error with no OpenCV "[ERROR:0@…]" line before it. Real files, the real CLI."""

from __future__ import annotations

import json
import shutil
import struct
import zlib

import pytest

from masklens.core.cli import main
from masklens.core.kinds.demo import DEMO_DIR, demo_argv


def test_export_accepts_the_flag_its_hint_names(tmp_path, capsys):
    rc = main(["export", "cafe", *demo_argv("cafe"), "--to", "csv", "--allow-outside-root",
               "--out", str(tmp_path / "x")])
    assert rc == 0, capsys.readouterr().err


@pytest.mark.parametrize("kind", ["cgebench", "r2sm"])
def test_a_boolean_file_name_is_refused_naming_the_record(kind, tmp_path, capsys):
    root = tmp_path / "demo"
    shutil.copytree(DEMO_DIR / kind, root / kind)
    ann = root / kind / "ann.json"
    data = json.loads(ann.read_text())
    data["images"][0]["file_name"] = True
    ann.write_text(json.dumps(data))
    assert main(["score", kind, *demo_argv(kind, root=root)]) == 2
    err = capsys.readouterr().err
    assert "field 'file_name'" in err and "expected a file name" in err and "Traceback" not in err


BROKEN = {  # IHDR fields (width, height, depth, colour, compression, filter, interlace), CRC right
    "crc": ((8, 8, 8, 0, 0, 0, 0), False),
    "empty": ((0, 8, 8, 0, 0, 0, 0), True),
    "interlace": ((8, 8, 8, 0, 0, 0, 7), True),
    "depth": ((8, 8, 3, 2, 0, 0, 0), True),
}


def _broken_ihdr_png(path, fields, crc_ok) -> None:
    ihdr = struct.pack(">IIBBBBB", *fields)
    crc = zlib.crc32(b"IHDR" + ihdr) if crc_ok else 0
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", crc)
    body = zlib.compress(b"\0" * 9 * 8)
    idat = struct.pack(">I", len(body)) + b"IDAT" + body + struct.pack(">I", zlib.crc32(b"IDAT" + body))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk + idat + b"\0\0\0\0IEND\xaeB`\x82")


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_broken_png_header_is_one_clean_error_without_library_lines(broken, tmp_path, capfd):
    root = tmp_path / "demo"
    shutil.copytree(DEMO_DIR / "hallusegbench", root / "hallusegbench")
    first = sorted((root / "hallusegbench" / "pred_demo").rglob("*.png"))[0]
    _broken_ihdr_png(first, *BROKEN[broken])
    capfd.readouterr()
    rc = main(["score", "hallusegbench", *demo_argv("hallusegbench", root=root)])
    err = capfd.readouterr().err
    assert rc == 2 and "cannot decode mask file" in err and "PNG header" in err and first.name in err
    assert "[ERROR" not in err and "libpng" not in err and "imread" not in err


def test_fiftyone_export_keeps_an_image_with_a_255_byte_name(tmp_path, capsys):
    root = tmp_path / "demo"
    shutil.copytree(DEMO_DIR / "cafe", root / "cafe")
    ann = root / "cafe" / "ann.json"
    data = json.loads(ann.read_text())
    img = data["images"][0]
    long_name = "é" * 50 + "x" * (255 - 100 - 4) + ".png"  # 255 bytes, valid on the filesystem
    assert len(long_name.encode()) == 255
    (root / "cafe" / "images" / img["file_name"]).rename(root / "cafe" / "images" / long_name)
    img["file_name"] = long_name
    ann.write_text(json.dumps(data))
    out = tmp_path / "fo"
    rc = main(["export", "cafe", *demo_argv("cafe", root=root), "--to", "fiftyone", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    names = [p.name for p in (out / "data").iterdir()]
    long = [n for n in names if "xxxx" in n]
    assert len(long) == 1 and len(long[0].encode()) <= 255 and long[0].endswith(".png")
    assert (out / "data" / long[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    labels = json.loads((out / "labels.json").read_text())
    assert long[0] in {i["file_name"] for i in labels["images"]}
