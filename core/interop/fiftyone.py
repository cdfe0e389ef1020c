"""A dataset directory FiftyOne imports with its own importers: ``data/`` (the images, linked or
copied), ``samples.csv`` (the image-level fields, :func:`image_rows`), ``labels.json`` (the
ground truth, as :func:`masklens.core.interop.coco.ground_truth` builds it) and
``predictions/<label>.json`` (each prediction set as a full COCO dataset whose annotations carry
``score``, so that ``Dataset.merge_dir`` adds it as a label field)::

    import fiftyone as fo
    ds = fo.Dataset.from_dir(dataset_dir=DIR, dataset_type=fo.types.CSVDataset,
                             labels_path="samples.csv")
    ds.merge_dir(dataset_dir=DIR, dataset_type=fo.types.COCODetectionDataset,
                 labels_path="labels.json", label_types="segmentations",
                 label_field="ground_truth")
    ds.merge_dir(dataset_dir=DIR, dataset_type=fo.types.COCODetectionDataset,
                 labels_path="predictions/LABEL.json", label_types="segmentations",
                 label_field="LABEL")

FiftyOne's COCO importer keeps only the width and height of an image record, so the image-level
fields come from ``samples.csv``, which FiftyOne's CSV importer (``fo.types.CSVDataset``) reads:
one row per image, ``filepath`` its name in ``data/`` (the importer looks it up there, as the COCO
importer does a ``file_name``), ``sample_id``, the sample's group under the kind's name for it
(``group``; CAFE ``edit_type``) and the reviewers' ``verdicts``; each non-empty cell becomes a
string field of the FiftyOne sample (``ds.match(F("edit_type") == "OC")``). Both importers key a
sample by its absolute ``filepath``, so the COCO merges add their labels to the CSV's samples.
An image several masklens samples share (SA-Co/Gold's prompts on one image) is one FiftyOne sample:
its ids and distinct groups are joined with ``;`` and its verdicts are all of theirs.

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
from masklens.core.files.io import atomic_write_json, atomic_write_text
from masklens.core.files.safe_csv import csv_text
from masklens.core.interop.coco import annotator_files, coco_layout, ground_truth, results
from masklens.core.interop.table import ExportTable, ImageEntry
from masklens.core.schema import Sample

DATA = "data"
#: the image-level fields, one row per image (FiftyOne's CSVDataset)
SAMPLES_CSV = "samples.csv"
#: joins the values of the samples that share an image in a samples.csv cell
SEPARATOR = ";"
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


def samples_on_images(table: ExportTable) -> dict[int, list[Sample]]:
    """Image entry id -> the samples that hold the image, in benchmark order."""
    out: dict[int, list[Sample]] = {e.id: [] for e in table.images}
    for sample in table.benchmark.samples:
        for key in sample.images:
            held = out[table.image_of[(sample.id, key)].id]
            if not held or held[-1] is not sample:
                held.append(sample)
    return out


def image_rows(table: ExportTable, names: dict[int, str]) -> tuple[list[dict[str, str]], list[str]]:
    """``samples.csv``'s rows (one per image, in ``data/``'s names) and columns: ``filepath``,
    ``sample_id``, the kind's group (:attr:`~masklens.core.scoring.contract.BenchmarkKind.group_name`)
    and ``verdicts``. An image several samples share joins their ids and their distinct groups
    with ``;`` (in benchmark order) and lists all their verdicts, ``; ``-joined."""
    group = table.kind.group_name
    held_by = samples_on_images(table)
    rows = []
    for entry in table.images:
        samples = held_by[entry.id]
        rows.append({
            "filepath": names[entry.id],
            "sample_id": SEPARATOR.join(s.id for s in samples),
            group: SEPARATOR.join(dict.fromkeys(s.group for s in samples if s.group)),
            "verdicts": "; ".join(v for s in samples if (v := table.verdicts_of(s.id))),
        })
    return rows, ["filepath", "sample_id", group, "verdicts"]


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
    written += annotator_files(table, out, names, frozenset(placeholders), layout)
    rows, columns = image_rows(table, names)
    atomic_write_text(out / SAMPLES_CSV, csv_text(rows, columns))
    return [*written, out / SAMPLES_CSV]
