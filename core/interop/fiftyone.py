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

fiftyone is not a dependency of masklens: this module only writes files.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from masklens.core.errors import MasklensError
from masklens.core.files.io import atomic_write_json
from masklens.core.interop.coco import annotator_files, ground_truth, results
from masklens.core.interop.table import ExportTable, ImageEntry

DATA = "data"


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


def _place(entry: ImageEntry, target: Path, copy: bool) -> None:
    src = Path(entry.ref.path).resolve()
    if not src.is_file():
        raise MasklensError("image file not found", path=src, record=entry.sample_id,
                            hint="give the image folder with --images, or leave out --copy-images")
    if copy:
        shutil.copy2(src, target)
    else:
        os.symlink(src, target)


def write_fiftyone(table: ExportTable, out: Path, *, copy_images: bool = False) -> list[Path]:
    """Write the directory into ``out`` (a fresh folder). Images without a known path (scoring
    needs none) are left out of ``data/``; FiftyOne then shows their labels without pixels."""
    names = {e.id: data_name(e) for e in table.images}
    data = out / DATA
    data.mkdir(parents=True, exist_ok=True)
    for entry in table.images:
        if entry.ref.path is not None and (copy_images or Path(entry.ref.path).exists()):
            _place(entry, data / names[entry.id], copy_images)
    gt = ground_truth(table, names)
    written = [out / "labels.json"]
    atomic_write_json(written[0], gt, indent=None)
    for i, run in enumerate(table.runs):
        anns = [{"id": k + 1, "iscrowd": 0, **r} for k, r in enumerate(results(table, i))]
        dataset = {**{k: gt[k] for k in ("info", "images", "categories")}, "annotations": anns}
        path = out / "predictions" / f"{run.attr}.json"
        atomic_write_json(path, dataset, indent=None)
        written.append(path)
    return written + annotator_files(table, out, names)
