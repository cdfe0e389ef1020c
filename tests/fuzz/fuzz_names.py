"""Fuzz mutations of names: hostile ``hf://`` paths against a REAL Hugging Face cache, and hostile
image names in annotation files.

``hub_path``: the workspace's files are laid out as huggingface_hub lays out its cache (blobs/
named by content hash, snapshots/<commit>/ of relative symlinks into blobs/, refs/main and
refs/pr/1, and a model repository), built with huggingface_hub's own functions, and the run is
offline (``HF_HUB_OFFLINE=1``). One file or folder argument is swapped for an ``hf://`` string:
valid forms (the same file, ``@refs/pr/1``, the ``hf://OWNER/NAME`` model form, a folder with a
trailing slash) must give a valid run; hostile ones (``..``, ``%2e%2e``, backslashes, a
percent-encoded NUL, unicode look-alikes, very long, empty parts, spaces and buckets, a
missing revision) a clean one-line error. A ``..`` that a naive resolver would follow leads to
the very file the argument named, so a run reading it would pass: such runs are marked
``outside_root`` and an exit 0 is reported as a read outside the root. (A literal NUL cannot
reach a program's argv — execve ends the string there — so only its encoded form is tried.)

``image_name`` (``predict --model demo`` runs, which decode every image): one COCO
``file_name`` becomes an absolute path or ``../`` out of the images folder (must be refused),
a 255-byte name whose file exists (valid), a 256-byte name (too long: clean error), a NUL or
a newline in the name, the NFD spelling of an NFC file name on disk, a name that is a folder,
a FIFO or a link to a device node (never read, never a hang).
"""

from __future__ import annotations

import os
import random
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

from fuzz_cases import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: hub_layout (also as a script)
from hub_layout import lay_out  # noqa: E402

MAIN = "a" * 40
PR = "b" * 40
DATASET, MODEL = "acme/demo", "acme/preds"
#: flags whose value may become an hf:// path, and whether they name a folder
HUB_FLAGS = {"--ann": False, "--gt": False, "--data": False, "--pred": False,
             "--images": True, "--root": True, "--pred-dir": True}


def lay_out_cache(ws: Workspace) -> Path:
    """The workspace's demo folder as dataset ``acme/demo`` at ``main`` (and its JSON files at
    ``refs/pr/1`` and in model ``acme/preds``), exactly as huggingface_hub's downloads lay it
    out; the run's environment points at it, offline."""
    from huggingface_hub import file_download

    cache = ws.base / "hub"

    def put(repo_id: str, repo_type: str, commit: str, files: dict[str, Path]) -> Path:
        return lay_out(cache, repo_id, repo_type, commit, files)

    files = {p.relative_to(ws.root).as_posix(): p for p in sorted(ws.root.rglob("*")) if p.is_file()}
    jsons = {k: v for k, v in files.items() if k.endswith(".json")}
    storage = put(DATASET, "dataset", MAIN, files)
    file_download._cache_commit_hash_for_specific_revision(str(storage), "main", MAIN)
    put(DATASET, "dataset", PR, jsons)
    file_download._cache_commit_hash_for_specific_revision(str(storage), "refs/pr/1", PR)
    model = put(MODEL, "model", MAIN, jsons)
    file_download._cache_commit_hash_for_specific_revision(str(model), "main", MAIN)
    ws.env.update(HF_HUB_CACHE=str(cache), HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1")
    return cache / "datasets--acme--demo" / "snapshots" / MAIN


def _hub_arguments(ws: Workspace) -> list[int]:
    return [i + 1 for i, a in enumerate(ws.argv[:-1]) if a in HUB_FLAGS]


#: name -> (url builder (rel = the argument's path inside the repo, back = a `..` path from the
#: snapshot to the local file the argument named, folder), expected: "valid" | "error" | "escape")
HubVariant = tuple[Callable[[str, str, bool], str], str]
HUB_VARIANTS: dict[str, HubVariant] = {
    "same file": (lambda rel, back, d: f"hf://datasets/{DATASET}/{rel}" + ("/" if d else ""), "valid"),
    "revision main": (lambda rel, back, d: f"hf://datasets/{DATASET}@main/{rel}", "valid"),
    "dot-dot": (lambda rel, back, d: f"hf://datasets/{DATASET}/{back}", "escape"),
    "dot-dot inside": (lambda rel, back, d: f"hf://datasets/{DATASET}/x/../{rel}", "error"),
    "dot segment": (lambda rel, back, d: f"hf://datasets/{DATASET}/./{rel}", "error"),
    "encoded dot-dot": (lambda rel, back, d: f"hf://datasets/{DATASET}/{back.replace('..', '%2e%2e')}",
                        "error"),
    "backslash dot-dot": (lambda rel, back, d: f"hf://datasets/{DATASET}/{back.replace('/', chr(92))}",
                          "error"),
    "encoded NUL": (lambda rel, back, d: f"hf://datasets/{DATASET}/{rel}%00.png", "error"),
    "double slash": (lambda rel, back, d: f"hf://datasets/{DATASET}//{rel}", "any"),
    "trailing slashes": (lambda rel, back, d: f"hf://datasets/{DATASET}/{rel}///", "any"),
    "unicode look-alike": (lambda rel, back, d: f"hf://datasets/аcme/demo/{rel}", "error"),  # Cyrillic а
    "unicode NFD": (lambda rel, back, d: f"hf://datasets/{DATASET}/{unicodedata.normalize('NFD', 'é')}/{rel}",
                    "error"),
    "right-to-left mark": (lambda rel, back, d: f"hf://datasets/{DATASET}/\u202e{rel}", "error"),
    "very long": (lambda rel, back, d: f"hf://datasets/{DATASET}/{'x' * 5000}/{rel}", "error"),
    "long repo name": (lambda rel, back, d: f"hf://datasets/acme/{'n' * 300}/{rel}", "error"),
    "no name": (lambda rel, back, d: "hf://datasets/acme", "error"),
    "bare scheme": (lambda rel, back, d: "hf://", "error"),
    "empty revision": (lambda rel, back, d: f"hf://datasets/{DATASET}@/{rel}", "error"),
    "missing revision": (lambda rel, back, d: f"hf://datasets/{DATASET}@v9/{rel}", "error"),
    "space repo": (lambda rel, back, d: f"hf://spaces/{DATASET}/{rel}", "error"),
    "bucket": (lambda rel, back, d: f"hf://buckets/{DATASET}/{rel}", "error"),
    "model form dot-dot": (lambda rel, back, d: f"hf://acme/../../{back}", "escape"),
    "uppercase scheme": (lambda rel, back, d: f"HF://datasets/{DATASET}/{rel}", "error"),
}
#: forms valid only for the JSON files that refs/pr/1 and the model repository hold
JSON_ONLY: dict[str, HubVariant] = {
    "pull-request ref": (lambda rel, back, d: f"hf://datasets/{DATASET}@refs/pr/1/{rel}", "valid"),
    "model form": (lambda rel, back, d: f"hf://{MODEL}/{rel}", "valid"),
    "models prefix": (lambda rel, back, d: f"hf://models/{MODEL}/{rel}", "valid"),
}


def hub_variants(folder: bool) -> dict[str, HubVariant]:
    return HUB_VARIANTS if folder else {**HUB_VARIANTS, **JSON_ONLY}


def apply_hub_variant(ws: Workspace, index: int, name: str) -> str:
    """Swap argument ``ws.argv[index]`` for the hf:// form ``name`` of the same file/folder."""
    snapshot = lay_out_cache(ws)
    local = Path(ws.argv[index])
    folder = HUB_FLAGS[ws.argv[index - 1]]
    rel = local.relative_to(ws.root).as_posix()
    back = Path(os.path.relpath(local, snapshot)).as_posix()  # what a naive `..` would reach
    build, expected = hub_variants(folder)[name]
    ws.argv[index] = build(rel, back, folder)
    if expected == "escape":
        ws.outside_root = True
    elif expected == "error":
        ws.expect_error = True
    elif expected == "valid":
        ws.expect_valid = True
    return f"hub {ws.argv[index - 1]} {name}: {ws.argv[index][:120]}"


def hub_path(rng: random.Random, ws: Workspace) -> str:
    """One file or folder argument as a hostile (or valid) hf:// path on a real offline cache."""
    try:
        import huggingface_hub  # noqa: F401
    except ImportError:
        return "hub: huggingface_hub not installed"
    index = rng.choice(_hub_arguments(ws))
    name = rng.choice(sorted(hub_variants(HUB_FLAGS[ws.argv[index - 1]])))
    return apply_hub_variant(ws, index, name)


# ------------------------------------------------------------------ image names (predict)
IMAGE_NAME_VARIANTS = ("absolute outside", "dot-dot outside", "255 bytes", "256 bytes", "NUL",
                       "newline", "NFD of an NFC file", "folder", "FIFO", "device link", "absolute inside")


def _annotation(ws: Workspace) -> Path:
    return next(p for p in ws.json_inputs() if "pred" not in p.name)


def _images_dir(ws: Workspace) -> Path:
    return Path(ws.argv[ws.argv.index("--images") + 1])


def apply_image_name(ws: Workspace, name: str, pick: int = 0) -> str:
    """Make the ``pick``-th image of the annotation's ``images[]`` hostile in way ``name``."""
    f = _annotation(ws)
    obj = ws.load(f)
    # an image the loader reads (a CAFE negative entry names its positive's picture: not read)
    used = [im for im in obj["images"] if "fp_source_id" not in im]
    img = used[pick % len(used)]
    images = _images_dir(ws)
    src = images / img["file_name"]
    data = src.read_bytes()
    if name == "absolute outside":
        (ws.outside / "outside.png").write_bytes(data)
        img["file_name"] = str(ws.outside / "outside.png")
        ws.outside_root = True
    elif name == "dot-dot outside":
        (ws.outside / "outside.png").write_bytes(data)
        img["file_name"] = os.path.relpath(ws.outside / "outside.png", images)
        ws.outside_root = True
    elif name == "absolute inside":  # an absolute path into the images folder: still inside
        img["file_name"] = str(src)
    elif name in ("255 bytes", "256 bytes"):
        n = 255 if name == "255 bytes" else 256
        long = "i" * (n - 4) + ".png"
        if n == 255:
            (images / long).write_bytes(data)
            ws.expect_valid = True
        else:
            ws.expect_error = True
        img["file_name"] = long
    elif name == "NUL":
        img["file_name"] = img["file_name"] + "\x00.png"
        ws.expect_error = True
    elif name == "newline":
        odd = "line\nbreak.png"
        (images / odd).write_bytes(data)
        img["file_name"] = odd
        ws.expect_valid = True
    elif name == "NFD of an NFC file":
        nfc = unicodedata.normalize("NFC", "café.png")
        (images / nfc).write_bytes(data)
        img["file_name"] = unicodedata.normalize("NFD", nfc)  # other bytes: another name on Linux
    elif name == "folder":
        (images / "a_folder.png").mkdir()
        img["file_name"] = "a_folder.png"
        ws.expect_error = True
    elif name == "FIFO":
        os.mkfifo(images / "pipe.png")
        img["file_name"] = "pipe.png"
        ws.expect_error = True
    elif name == "device link":
        (images / "zero.png").symlink_to("/dev/zero")
        img["file_name"] = "zero.png"
        ws.expect_error = True
    else:
        raise ValueError(name)
    ws.dump(f, obj, ensure_ascii=False)
    return f"image name {name}: {img['file_name']!r}"[:160]


def image_name(rng: random.Random, ws: Workspace) -> str:
    """One image's file_name made hostile (predict runs of the COCO-style kinds)."""
    return apply_image_name(ws, rng.choice(IMAGE_NAME_VARIANTS), rng.randrange(100))


NAME_MUTATIONS = {"hub_path": hub_path}
PREDICT_MUTATIONS = {"image_name": image_name, "hub_path": hub_path}
#: kinds whose annotation has COCO images[] with file_name under --images (predict runs)
IMAGE_NAME_KINDS = ("cafe", "pcs", "cgebench", "r2sm")
