"""The export as a researcher's own tools read it: pycocotools' ``COCO.loadRes`` takes the mask
areas of the results (not the boxes'), and a FiftyOne directory written without ``--images``
resolves every image the way FiftyOne's ``COCODetectionDatasetImporter`` does (fiftyone itself
cannot be installed here; :func:`fiftyone_image_path` follows its source, see docs/interop.md)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
from pathlib import Path

import numpy as np
import pycocotools.mask as mask_utils
import pytest
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from masklens.core.interop.export import export

ROOT = Path(__file__).resolve().parents[2]
D = ROOT / "resources" / "demo"
CAFE = {"ann": f"{D}/cafe/ann.json", "pred": f"{D}/cafe/pred_demo.json"}
PCS = {"gt": [f"{D}/pcs/gold_annotator_{i}.json" for i in (1, 2, 3)], "pred": f"{D}/pcs/pred_demo.json"}


def _quiet(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args)


@pytest.mark.parametrize("files", [CAFE, PCS], ids=["cafe", "pcs"])
def test_load_res_takes_the_mask_areas_of_the_results(files, tmp_path):
    kind = "pcs" if "gt" in files else "cafe"
    written = export(kind, "coco", tmp_path / "out", **files)
    gt = _quiet(COCO, str(written[0]))
    dt = _quiet(gt.loadRes, str(written[1]))
    anns = list(dt.anns.values())
    by_box = [a for a in anns if a["area"] != a["bbox"][2] * a["bbox"][3]]
    assert by_box, "the demo has instances whose mask is smaller than their box"
    for a in anns:  # loadRes kept the mask's area and derived the box from the mask
        assert a["area"] == pytest.approx(float(mask_utils.area(a["segmentation"])))
        assert a["bbox"] == pytest.approx(list(mask_utils.toBbox(a["segmentation"])))
    ev = _quiet(COCOeval, gt, dt, "segm")  # COCOeval's area ranges read these areas
    _quiet(ev.evaluate)
    assert all(d["area"] == dt.anns[d["id"]]["area"] for d in ev._dts.values() for d in d)


def fiftyone_image_path(dataset_dir: Path, file_name: str) -> Path:
    """Where FiftyOne's COCODetectionDatasetImporter finds an image (fiftyone/utils/coco.py,
    ``__next__``): an absolute ``file_name`` as it is, else a lookup in the recursive listing of
    ``data/`` (``_load_data_map(data_path, recursive=True)``), which raises KeyError when the
    file is not there. Its CSVDatasetImporter (fiftyone/utils/csv.py, ``setup``) looks a
    ``filepath`` up in the same listing (a miss there is a ValueError)."""
    if os.path.isabs(file_name):
        return Path(file_name)
    data = dataset_dir / "data"
    listing = {p.relative_to(data).as_posix(): p for p in data.rglob("*") if not p.is_dir()}
    return listing[file_name]


@pytest.mark.parametrize("files", [CAFE, PCS], ids=["cafe", "pcs"])
def test_fiftyone_directory_without_images_resolves_every_image(files, tmp_path):
    kind = "pcs" if "gt" in files else "cafe"
    written = export(kind, "fiftyone", tmp_path / "fo", **files)
    for path in written[:-1]:  # labels.json, predictions/*.json, annotators/*.json
        for image in json.loads(path.read_text())["images"]:
            found = fiftyone_image_path(tmp_path / "fo", image["file_name"])
            assert found.is_file() and image["placeholder"] is True
            size = _png_size(found.read_bytes())
            assert size == (image["width"], image["height"])
    assert written[-1].name == "samples.csv"  # its filepaths are looked up in data/ alike
    with written[-1].open(newline="") as f:
        assert all(fiftyone_image_path(tmp_path / "fo", row["filepath"]).is_file() for row in csv.DictReader(f))


def _png_size(raw: bytes) -> tuple[int, int]:
    import zlib

    assert raw[:8] == b"\x89PNG\r\n\x1a\n" and raw[12:16] == b"IHDR"
    w, h = int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")
    idat = raw.index(b"IDAT")
    n = int.from_bytes(raw[idat - 4:idat], "big")
    pixels = zlib.decompress(raw[idat + 4:idat + 4 + n])
    assert len(pixels) == h * (w + 1)  # grey, 8 bits, one filter byte a row
    assert np.all(np.frombuffer(pixels, np.uint8).reshape(h, w + 1)[:, 1:] == 128)
    return w, h


def test_fiftyone_directory_with_images_links_them_and_marks_none_placeholder(tmp_path):
    export("cafe", "fiftyone", tmp_path / "fo", images=f"{D}/cafe/images", **CAFE)
    labels = json.loads((tmp_path / "fo" / "labels.json").read_text())
    for image in labels["images"]:
        found = fiftyone_image_path(tmp_path / "fo", image["file_name"])
        assert found.is_symlink() and "placeholder" not in image
