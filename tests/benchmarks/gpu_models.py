"""GPU benchmark of the model backends (`make bench-gpu`).

Per backend, on a CUDA machine: model load time, first-prompt latency on a new
image (encode + decode; once cold, right after loading, and once warm, on a
second image), the latency of each further prompt on the same image (the cached
encoding is reused), at 1008 px (SAM 3) or 1024 px (the others), and peak GPU
memory. Weights come from the Hugging Face cache (the backends' default ids,
offline) or from paths given by flags or environment variables:

    python tests/benchmarks/gpu_models.py [--backends sam3,grounded-sam2,owlv2-sam2,clipseg]
        [--weights sam3=/models/sam3 --weights clipseg=CIDAS/clipseg-rd64-refined]
        [--option grounded-sam2.sam2_weights=/models/sam2.1-hiera-large]
        [--image photo.jpg] [--prompts 8] [--out results.json]

    MASKLENS_BENCH_WEIGHTS_SAM3=/models/sam3              (same as --weights sam3=…)
    MASKLENS_BENCH_OPTIONS_GROUNDED_SAM2='{"sam2_weights": "/models/sam2"}'

A backend whose weights are absent is reported as skipped, with the reason. On
a machine without CUDA the script says so and exits 0.

Golden outputs (tests/benchmarks/golden_outputs.py): on CUDA the script also records each
backend's masks (RLE) and scores on the demo images and a few generated photographs into
``--golden-dir`` (default tests/benchmarks/golden): the first run writes ``real_models.json``,
later runs write ``real_models.latest.json``, print the differences and exit 1 if there are any.
On the CPU nothing is recorded unless ``--golden-dir`` is given. ``--device cpu`` runs the
same measurements on the CPU (to check the script itself, e.g. with tiny
checkpoints; those numbers are not GPU numbers and are labelled as such).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

if str(Path(__file__).resolve().parent) not in sys.path:  # golden_outputs sits beside this script
    sys.path.insert(0, str(Path(__file__).resolve().parent))

DEFAULT_BACKENDS = ("sam3", "grounded-sam2", "owlv2-sam2", "clipseg")
#: input resolution each backend's processor works at (SAM 3: 1008 px; SAM 2 and the rest: 1024 px)
SIZES = {"sam3": 1008}
DEFAULT_SIZE = 1024
PROMPTS = ("a red circle", "a blue square", "a person", "a car", "a dog", "a green triangle",
           "a yellow star", "a tree", "a cup", "a bicycle", "a cat", "a chair")


def scene(size: int, seed: int) -> np.ndarray:
    """A deterministic size×size RGB scene with coloured shapes on a textured background."""
    import cv2

    rng = np.random.default_rng(seed)
    img = (rng.normal(120, 25, (size, size, 3))).clip(0, 255).astype(np.uint8)
    img = cv2.GaussianBlur(img, (0, 0), 3)
    for _ in range(12):
        colour = tuple(int(c) for c in rng.integers(0, 255, 3))
        x, y = (int(v) for v in rng.integers(size // 10, size - size // 10, 2))
        r = int(rng.integers(size // 30, size // 8))
        if rng.random() < 0.5:
            cv2.circle(img, (x, y), r, colour, -1)
        else:
            cv2.rectangle(img, (x - r, y - r), (x + r, y + r), colour, -1)
    return img


def load_photo(path: str, size: int, seed: int) -> np.ndarray:
    import cv2

    from masklens.core.inference.runner import load_image

    img = cv2.resize(load_image(path), (size, size), interpolation=cv2.INTER_AREA)
    if seed:  # a second, different image: mirror it and shift the colours
        img = np.ascontiguousarray(img[:, ::-1])
        img = (img.astype(np.int16) + 17 * seed).clip(0, 255).astype(np.uint8)
    return img


def env_key(name: str) -> str:
    return name.upper().replace("-", "_")


def backend_options(name: str, args: argparse.Namespace) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    env_opts = os.environ.get(f"MASKLENS_BENCH_OPTIONS_{env_key(name)}")
    if env_opts:
        opts.update(json.loads(env_opts))
    env_w = os.environ.get(f"MASKLENS_BENCH_WEIGHTS_{env_key(name)}")
    if env_w:
        opts["weights"] = env_w
    for item in args.weights:
        key, _, spec = item.partition("=")
        if key == name:
            opts["weights"] = spec
    for item in args.option:
        target, _, kv = item.partition(".")
        key, _, value = kv.partition("=")
        if target == name:
            try:
                opts[key] = json.loads(value)
            except json.JSONDecodeError:
                opts[key] = value
    opts["device"] = args.device
    return opts


class Clock:
    """Wall time with CUDA synchronised before reading, so GPU work is counted."""

    def __init__(self, torch: Any, cuda: bool) -> None:
        self.torch, self.cuda = torch, cuda

    def now(self) -> float:
        if self.cuda:
            self.torch.cuda.synchronize()
        return time.perf_counter()


def bench_backend(
    name: str, args: argparse.Namespace, torch: Any, golden: dict[str, np.ndarray] | None = None
) -> dict[str, Any]:
    from masklens.core.errors import MasklensError
    from masklens.core.models.base import SegmentRequest
    from masklens.core.models.registry import create_segmenter

    cuda = args.device.startswith("cuda")
    clock = Clock(torch, cuda)
    size = args.size or SIZES.get(name, DEFAULT_SIZE)
    images = [load_photo(args.image, size, s) if args.image else scene(size, s) for s in (0, 1)]
    prompts = [PROMPTS[i % len(PROMPTS)] for i in range(max(2, args.prompts))]
    row: dict[str, Any] = {"backend": name, "size": size, "device": args.device}
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    try:
        seg = create_segmenter(name, **backend_options(name, args))
        t0 = clock.now()
        load = getattr(seg, "ensure_loaded", None)
        if callable(load):
            load()
            row["load_s"] = clock.now() - t0
        else:
            row["load_s"] = None  # loaded inside the first prompt
        if cuda:
            row["weights_mib"] = (torch.cuda.memory_allocated() - base) / 2**20
        for label, image in (("cold", images[0]), ("warm", images[1])):
            t = clock.now()
            first = seg.segment(image, SegmentRequest(prompts[0]))
            row[f"first_prompt_{label}_ms"] = (clock.now() - t) * 1000
            further = []
            for p in prompts[1:]:
                t = clock.now()
                seg.segment(image, SegmentRequest(p))
                further.append((clock.now() - t) * 1000)
            row[f"further_{label}_ms"] = further
            row[f"instances_{label}"] = len(first.masks)
        if golden is not None:  # recorded apart from the timings: kept out of the rows written by --out
            from golden_outputs import record

            row["_golden"] = record(seg, golden)
        row["checkpoint"] = seg.provenance().get("checkpoint")
        row["dtype"] = seg.provenance().get("dtype")
        if cuda:
            row["peak_mib"] = (torch.cuda.max_memory_allocated() - base) / 2**20
        seg.unload()
        row["status"] = "ok"
    except MasklensError as exc:  # missing weights, bad option: report and go on
        row["status"] = f"skipped: {exc}".splitlines()[0]
    except ModuleNotFoundError as exc:
        row["status"] = f"skipped: backend not available ({exc})"
    except Exception as exc:  # one failing backend must not lose the others' numbers
        row["status"] = f"error: {type(exc).__name__}: {exc}"
    finally:
        if cuda:
            torch.cuda.empty_cache()
    return row


def _fmt(v: Any, unit: str = "") -> str:
    if v is None:
        return "-"
    if isinstance(v, list):
        return f"{statistics.median(v):.1f}{unit} (min {min(v):.1f}, max {max(v):.1f})" if v else "-"
    return f"{v:.2f}{unit}" if isinstance(v, float) else str(v)


def report(rows: list[dict[str, Any]], header: str) -> str:
    lines = [header]
    for r in rows:
        lines.append(f"\n{r['backend']} @ {r['size']} px on {r['device']}: {r['status']}")
        if r["status"] != "ok":
            continue
        lines += [
            f"  checkpoint: {r.get('checkpoint')}  dtype: {r.get('dtype')}",
            f"  load: {_fmt(r.get('load_s'), ' s')}",
            f"  first prompt, new image (encode + decode): cold {_fmt(r.get('first_prompt_cold_ms'), ' ms')}, "
            f"warm {_fmt(r.get('first_prompt_warm_ms'), ' ms')}",
            f"  each further prompt, same image (median): cold image {_fmt(r.get('further_cold_ms'), ' ms')}; "
            f"warm image {_fmt(r.get('further_warm_ms'), ' ms')}",
        ]
        if "peak_mib" in r:
            lines.append(f"  GPU memory: weights {r['weights_mib']:.0f} MiB, peak {r['peak_mib']:.0f} MiB")
        ratio = None
        if r.get("further_warm_ms") and r.get("first_prompt_warm_ms"):
            ratio = r["first_prompt_warm_ms"] / statistics.median(r["further_warm_ms"])
        if ratio:
            lines.append(f"  first/further prompt latency ratio (warm): {ratio:.1f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backends", default=",".join(DEFAULT_BACKENDS))
    p.add_argument("--weights", action="append", default=[], metavar="NAME=PATH_OR_ID")
    p.add_argument("--option", action="append", default=[], metavar="NAME.KEY=VALUE")
    p.add_argument("--image", default=None, help="a photo to use (resized); default: a synthetic scene")
    p.add_argument("--size", type=int, default=None, help="override the per-backend input size")
    p.add_argument("--prompts", type=int, default=8, help="prompts per image (first + further)")
    p.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu to check the script")
    p.add_argument("--out", default=None, help="also write the rows as JSON")
    p.add_argument("--golden-dir", default=None,
                   help="record golden outputs here (default on CUDA: tests/benchmarks/golden; on the CPU: none)")
    args = p.parse_args(argv)
    try:
        import torch
    except ImportError as exc:
        print(f"GPU benchmark skipped: torch is not importable ({exc})")
        return 0
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"GPU benchmark skipped: no CUDA device on this machine (torch {torch.__version__}, "
              "torch.cuda.is_available() is False). Nothing was measured.")
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download in a benchmark
    if args.device.startswith("cuda"):
        header = f"GPU benchmark on {torch.cuda.get_device_name(args.device)} (torch {torch.__version__})"
    else:
        header = (f"model benchmark on the CPU (torch {torch.__version__}) - checks the script; "
                  "these are NOT GPU numbers")
    golden_dir = args.golden_dir
    if golden_dir is None and args.device.startswith("cuda"):
        from golden_outputs import GOLDEN_DIR

        golden_dir = str(GOLDEN_DIR)
    images = None
    if golden_dir is not None:
        from golden_outputs import golden_images

        images = golden_images()
    rows = [bench_backend(n.strip(), args, torch, images) for n in args.backends.split(",") if n.strip()]
    recorded = {r["backend"]: r.pop("_golden") for r in rows if "_golden" in r}
    print(report(rows, header))
    if args.out:
        from masklens.core.files.io import atomic_write_json

        atomic_write_json(args.out, {"header": header, "rows": rows})
    failed = any(r["status"].startswith("error") for r in rows)
    if golden_dir is not None and images is not None:
        failed |= write_golden(Path(golden_dir), header, images, recorded)
    return 1 if failed else 0


def write_golden(folder: Path, header: str, images: dict[str, np.ndarray], recorded: dict[str, Any]) -> bool:
    """Write the golden file (first run) or the latest one and print its differences; True when a
    backend recorded in both differs."""
    from golden_outputs import PROMPTS, compare_files

    from masklens.core.files.io import atomic_write_json

    data = {"header": header, "images": list(images), "prompts": list(PROMPTS), "backends": recorded}
    golden = folder / "real_models.json"
    if not recorded:
        print("\ngolden outputs: no backend ran (no weights present); nothing recorded")
        return False
    folder.mkdir(parents=True, exist_ok=True)
    if not golden.is_file():
        atomic_write_json(golden, data)
        print(f"\ngolden outputs of {', '.join(recorded)} written to {golden} (commit it; later runs compare)")
        return False
    latest = folder / "real_models.latest.json"
    atomic_write_json(latest, data)
    diffs = compare_files(json.loads(golden.read_text()), data)
    print(f"\ngolden outputs: {latest} vs {golden}")
    for name, lines in diffs.items():
        print(f"  {name}: " + ("same within tolerance" if not lines else f"{len(lines)} difference(s)"))
        for line in lines[:20]:
            print(f"    {line}")
    for name in sorted(set(recorded) - set(diffs)):
        print(f"  {name}: not in the golden file (no golden outputs to compare with)")
    return any(diffs.values())


if __name__ == "__main__":
    sys.exit(main())
