"""A dataset directory FiftyOne imports with its own COCO importer
(``fo.types.COCODetectionDataset``): ``data/`` (the images, linked or copied), ``labels.json``
(the ground truth, as :func:`masklens.core.interop.coco.ground_truth` builds it) and
``predictions/<label>.json`` (each prediction set as a full COCO dataset whose annotations carry
``score``, so that ``Dataset.merge_dir`` adds it as a label field)::

    import fiftyone as fo
    ds = fo.Dataset.from_dir(dataset_dir=DIR, dataset_type=fo.types.COCODetectionDataset,
                             label_types="segmentations", label_field="ground_truth")
    ds.merge_dir(dataset_dir=DIR, dataset_type=fo.types.COCODetectionDataset,
                 labels_path="predictions/LABEL.json", label_types="segmentations",
                 label_field="LABEL")

A benchmark with several annotators (SA-Co/Gold) also has ``annotators/<key>.json``, each
further annotator's ground truth, merged the same way (``labels_path="annotators/gt1.json"``).

FiftyOne's importer looks every relative ``file_name`` up in ``data/`` and fails (KeyError) on
one that is not there, so an image whose file is unknown or missing (scoring needs none) gets a
uniform grey placeholder of its size in ``data/``, marked ``placeholder: true`` in the image
record: its labels import and show on grey.

fiftyone is not a dependency of masklens: this module only writes files.
"""

from __future__ import annotations

import os
import shutil
import struct
import zlib
from pathlib import Path

from masklens.core.errors import MasklensError
from masklens.core.files.io import atomic_write_json
from masklens.core.interop.coco import annotator_files, coco_layout, ground_truth, results
from masklens.core.interop.table import ExportTable, ImageEntry

DATA = "data"
#: the grey level of a placeholder image
PLACEHOLDER_GREY = 128


#: bytes in one file name (ext4, xfs, btrfs, tmpfs, APFS)
_NAME_MAX = 255


def data_name(entry: ImageEntry) -> str:
    """The image's unique name in ``data/``: its entry id and its own file name, the name's
    stem shortened (its suffix kept) where the two together would pass the filesystem's 255
    bytes (a valid 255-byte image name)."""
    base = Path(entry.ref.path).name if entry.ref.path is not None else f"{entry.ref.key}.png"
    name = f"{entry.id:06d}_{base}"
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) <= _NAME_MAX:
        return name
    suffix = Path(base).suffix.encode("utf-8", "surrogateescape")[:16]
    keep = raw[: _NAME_MAX - len(suffix) - 1].decode("utf-8", "ignore")  # never half a character
    return f"{keep}~{suffix.decode('utf-8', 'ignore')}"  # the id prefix keeps it unique


def placeholder_png(width: int, height: int) -> bytes:
    """A uniform grey 8-bit PNG of ``width`` × ``height`` (rows compress to almost nothing)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = b"\x00" + bytes([PLACEHOLDER_GREY]) * width
    body = zlib.compress(row * height, 9)
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


def _place(entry: ImageEntry, path: str | Path, target: Path, copy: bool) -> None:
    src = Path(path).resolve()
    if not src.is_file():
        raise MasklensError("image file not found", path=src, record=entry.sample_id,
                            hint="give the image folder with --images, or leave out --copy-images")
    if copy:
        shutil.copy2(src, target)
    else:
        os.symlink(src, target)


def write_fiftyone(table: ExportTable, out: Path, *, copy_images: bool = False) -> list[Path]:
    """Write the directory into ``out`` (a fresh folder). Images without a known path or file
    get a placeholder in ``data/`` (see the module's docstring)."""
    names = {e.id: data_name(e) for e in table.images}
    data = out / DATA
    data.mkdir(parents=True, exist_ok=True)
    placeholders = set()
    for entry in table.images:
        if entry.ref.path is not None and (copy_images or Path(entry.ref.path).exists()):
            _place(entry, entry.ref.path, data / names[entry.id], copy_images)
        else:
            (data / names[entry.id]).write_bytes(placeholder_png(entry.ref.width, entry.ref.height))
            placeholders.add(entry.id)
    layout = coco_layout(table, per_prompt=False)  # a sample per image, as FiftyOne shows them
    gt = ground_truth(table, names, placeholders=frozenset(placeholders), layout=layout)
    written = [out / "labels.json"]
    atomic_write_json(written[0], gt, indent=None)
    for i, run in enumerate(table.runs):
        anns = [{"id": k + 1, "iscrowd": 0, **r} for k, r in enumerate(results(table, i, bbox=True, layout=layout))]
        dataset = {**{k: gt[k] for k in ("info", "images", "categories")}, "annotations": anns}
        path = out / "predictions" / f"{run.attr}.json"
        atomic_write_json(path, dataset, indent=None)
        written.append(path)
    return written + annotator_files(table, out, names, frozenset(placeholders), layout)
