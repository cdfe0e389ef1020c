"""File-level mutations: FIFOs, devices, over-long names, folders where files belong, corrupt /
huge / 16-bit / RGBA PNGs, hostile ``.npy`` score maps, and paths that leave their root
(``../``, absolute paths, symlinks) — the last ones mark the workspace ``outside_root``."""

from __future__ import annotations

import os
import random
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
from fuzz_cases import Workspace
from fuzz_json import pick_path


def _png(width: int, height: int, *, bit_depth: int = 8, colour: int = 0, idat: bytes | None = None) -> bytes:
    """A PNG whose header declares ``width`` × ``height`` (the data need not match)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, colour, 0, 0, 0)
    body = idat if idat is not None else zlib.compress(b"\x00" * 64)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


def _npy_header(shape: tuple[int, ...], descr: str = "<f8") -> bytes:
    """An ``.npy`` v1 header declaring ``shape`` followed by a few bytes of data."""
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + b"\x00" * 64


def hostile_png(rng: random.Random, target: Path) -> str:
    """Replace ``target`` (a mask or score-map PNG) by a hostile one."""
    shape = cv2.imread(str(target), cv2.IMREAD_UNCHANGED)
    h, w = shape.shape[:2] if shape is not None else (64, 64)
    choice = rng.randrange(11)
    if choice == 0:
        data = target.read_bytes()
        target.write_bytes(data[: rng.randrange(len(data))])
    elif choice == 1:
        target.write_bytes(_png(100000, 100000))
    elif choice == 2:
        target.write_bytes(_png(1, 2**31 - 1))
    elif choice == 3:
        cv2.imwrite(str(target), np.full((h, w), 65535, np.uint16))
    elif choice == 4:
        cv2.imwrite(str(target), np.dstack([np.full((h, w), 255, np.uint8)] * 4))
    elif choice == 5:
        target.write_bytes(os.urandom(rng.randrange(1, 4096)))
    elif choice == 6:
        target.write_bytes(b"")
    elif choice == 7:
        cv2.imwrite(str(target), np.ones((1, 1), np.uint8))
    elif choice == 8:
        target.write_bytes(_png(40000, 40000, idat=zlib.compress(b"\x00" * (1 << 20))))
    elif choice == 9:
        target.write_bytes(_png(w, h, bit_depth=16, colour=6))  # RGBA 16-bit, data truncated
    else:
        cv2.imwrite(str(target), np.zeros((33000, 2), np.uint8))
    return f"png#{choice} {target.name}"


def hostile_npy(rng: random.Random, target: Path, h: int, w: int) -> str:
    choice = rng.randrange(10)
    if choice == 0:
        np.save(target, np.full((h, w), 0.5 + 0.5j))
    elif choice == 1:
        np.save(target, np.zeros((0, 0)))
    elif choice == 2:
        target.write_bytes(_npy_header((100000, 100000)))
    elif choice == 3:
        target.write_bytes(_npy_header((h, w), "|O"))
    elif choice == 4:
        np.save(target, np.full((h, w), np.nan))
    elif choice == 5:
        np.save(target, np.zeros((2, h, w)))
    elif choice == 6:
        np.save(target, np.array([["a"] * w] * h))
    elif choice == 7:
        target.write_bytes(_npy_header((2**62, 2)))
    elif choice == 8:
        np.save(target, np.ones((h, w), bool))
    else:
        target.write_bytes(b"\x93NUMPY\x01\x00\xff\xff" + b"{" * 100)
    return f"npy#{choice}"


# ------------------------------------------------------------------------- file-kind swaps
def fifo(rng, ws: Workspace, f: Path) -> str:
    f.unlink()
    os.mkfifo(f)
    return f"fifo {f.name}"


def device(rng, ws: Workspace, f: Path) -> str:
    f.unlink()
    f.symlink_to(rng.choice(["/dev/zero", "/dev/urandom", "/dev/null"]))
    return f"device {f.name} -> {os.readlink(f)}"


def directory(rng, ws: Workspace, f: Path) -> str:
    f.unlink()
    f.mkdir()
    return f"directory {f.name}"


def dangling_symlink(rng, ws: Workspace, f: Path) -> str:
    f.unlink()
    f.symlink_to(f.with_name("nowhere"))
    return f"dangling symlink {f.name}"


def unreadable(rng, ws: Workspace, f: Path) -> str:
    f.chmod(0)
    return f"mode 000 {f.name}"


FILE_KIND_MUTATIONS: dict[str, Callable[..., str]] = {
    "fifo": fifo, "device": device, "directory": directory, "dangling_symlink": dangling_symlink,
    "unreadable": unreadable,
}


def argv_path(rng, ws: Workspace) -> str:
    """A path argument swapped for /dev/zero, a FIFO, an over-long or a missing name."""
    idx = [i + 1 for i, a in enumerate(ws.argv[:-1]) if a.startswith("--") and os.sep in ws.argv[i + 1]]
    i = rng.choice(idx)
    choice = rng.randrange(4)
    if choice == 0:
        ws.argv[i] = "/dev/zero"
    elif choice == 1:
        fifo_path = ws.base / "argfifo"
        os.mkfifo(fifo_path)
        ws.argv[i] = str(fifo_path)
    elif choice == 2:
        ws.argv[i] = str(ws.base / ("n" * 5000))
    else:
        ws.argv[i] = str(ws.base / "a" / ("d" * 300) / "f.json")
    return f"argv {ws.argv[i - 1]} #{choice}"


# ------------------------------------------------------------- kind-specific file mutations
def _hallu_paths(ws: Workspace) -> tuple[Path, list]:
    f = ws.root / "data.json"
    return f, ws.load(f)


def hallu_png(rng, ws: Workspace) -> str:
    return hostile_png(rng, rng.choice(ws.pngs()))


def hallu_png_kind(rng, ws: Workspace) -> str:
    target = rng.choice(ws.pngs())
    name = rng.choice(list(FILE_KIND_MUTATIONS))
    return FILE_KIND_MUTATIONS[name](rng, ws, target)


def hallu_path_field(rng, ws: Workspace) -> str:
    """A mask path or ann_id in data.json made hostile: escaping, absolute, long, symlinked."""
    f, items = _hallu_paths(ws)
    item = rng.choice(items)
    key = rng.choice(["factual_mask_path", "counterfactual_mask_path", "ann_id", "factual_image_path"])
    choice = rng.randrange(6)
    is_path = key != "ann_id"  # ann_id only names prediction files (made safe names): no read
    if choice == 0:
        item[key] = "../../outside/outside.png"
        ws.outside_root = is_path
    elif choice == 1:
        item[key] = str(ws.outside / "outside.png")
        ws.outside_root = is_path
    elif choice == 2:
        link = ws.root / "masks" / "link.png"
        link.symlink_to(ws.outside / "outside.png")
        item[key] = "masks/link.png"
        ws.outside_root = is_path
    elif choice == 3:
        item[key] = "m" * 5000 + ".png"
    elif choice == 4:
        item[key] = rng.choice([5, None, True, 1.5, ["a"], {}, "", "\ud800.png"])
    else:
        item[key] = "masks/../masks/factual/0001.png"
    ws.dump(f, items)
    return f"hallu_path {key} #{choice}"


def _ovs_score_map_record(rng, ws: Workspace, suffix: str) -> tuple[Path, Path, int, int]:
    """Turn one OVS prediction into the score-map form; returns (pred file, map, h, w)."""
    f = ws.root / "pred.json"
    obj = ws.load(f)
    rec = rng.choice(obj["predictions"])
    h, w = rec["masks"]["0.1"]["size"]
    del rec["masks"]
    rec["score_map"] = f"maps/{rec['image_id']}_{rec['category_id']}{suffix}"
    ws.dump(f, obj)
    target = ws.root / rec["score_map"]
    target.parent.mkdir(exist_ok=True)
    if suffix == ".npy":
        np.save(target, np.random.default_rng(0).random((h, w)))
    else:
        cv2.imwrite(str(target), (np.random.default_rng(0).random((h, w)) * 255).astype(np.uint8))
    return f, target, h, w


def ovs_npy(rng, ws: Workspace) -> str:
    _, target, h, w = _ovs_score_map_record(rng, ws, ".npy")
    return hostile_npy(rng, target, h, w)


def ovs_png(rng, ws: Workspace) -> str:
    _, target, _, _ = _ovs_score_map_record(rng, ws, ".png")
    if rng.random() < 0.3:
        name = rng.choice(list(FILE_KIND_MUTATIONS))
        return FILE_KIND_MUTATIONS[name](rng, ws, target)
    return hostile_png(rng, target)


def ovs_path_field(rng, ws: Workspace) -> str:
    f, target, _, _ = _ovs_score_map_record(rng, ws, rng.choice([".npy", ".png"]))
    obj = ws.load(f)
    rec = next(r for r in obj["predictions"] if "score_map" in r)
    choice = rng.randrange(5)
    outside = ws.outside / ("outside" + target.suffix)
    outside.write_bytes(target.read_bytes())
    if choice == 0:
        rec["score_map"] = f"../../outside/{outside.name}"
        ws.outside_root = True
    elif choice == 1:
        rec["score_map"] = str(outside)
        ws.outside_root = True
    elif choice == 2:
        target.unlink()
        target.symlink_to(outside)
        ws.outside_root = True
    elif choice == 3:
        rec["score_map"] = "s" * 5000 + ".npy"
    else:
        rec["score_map"] = rng.choice([5, None, ["a"], {}, "", "\ud800.npy", "maps"])
    ws.dump(f, obj)
    return f"ovs_path #{choice}"


def gallery_file_name(rng, ws: Workspace) -> str:
    """Report gallery images: a file_name escaping the images folder, absolute, wrong type, long."""
    anns = [p for p in ws.json_inputs() if p.name != "pred.json" and "pred" not in p.name]
    if not anns:
        return "gallery: nothing"
    f = rng.choice(anns)
    obj = ws.load(f)
    images = obj.get("images") if isinstance(obj, dict) else None
    if not images:
        return "gallery: nothing"
    img = rng.choice(images)
    choice = rng.randrange(5)
    if choice == 0:
        img["file_name"] = "../../../outside/outside.png"
        ws.outside_root = True
    elif choice == 1:
        img["file_name"] = str(ws.outside / "outside.png")
        ws.outside_root = True
    elif choice == 2:
        img["file_name"] = rng.choice([5, 7, None, True, [], {}, 1.5])
    elif choice == 3:
        img["file_name"] = "f" * 5000 + ".png"
    else:
        img["file_name"] = rng.choice(["\ud800.png", "a\x00b.png", "<script>.png"])
    ws.dump(f, obj)
    return f"gallery file_name #{choice}"


def image_png(rng, ws: Workspace) -> str:
    """A gallery image made hostile (report runs)."""
    images = ws.images()
    if not images:
        return "image: nothing"
    return hostile_png(rng, rng.choice(images))


def pick_leaf_path(rng, ws: Workspace, f: Path):
    return pick_path(rng, ws.load(f), lambda v: not isinstance(v, (dict, list)))
