"""The longest stretch of a real-size forward pass with no cancel check in it.

Cancel acts at the next cancel check, so the longest gap between two checks bounds Cancel's
latency inside the model. For each real-size checkpoint under the cache folder's bench-models/
(built by `models_bench.py`), one forward pass on random inputs of the real shapes is run twice in
this process, with the interrupt hooks on: once with attention cores whole (the old behaviour) and
once split over head groups and linear layers over row blocks (core/models/attention_split.py,
linear_split.py). Prints per backend the pass's time,
the longest gap and the module it followed in each case, the number of checks, and whether the
two passes' outputs are bitwise equal.

    .venv/bin/python tests/benchmarks/bench_cancel_gaps.py [--only owlv2-large sam2.1-hiera-large]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_models  # noqa: E402


def _inputs(kind: str):
    import torch

    g = torch.Generator().manual_seed(0)
    ids = torch.randint(3, 40, (1, 8), generator=g)
    if kind == "owlv2":
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids),
                "pixel_values": torch.randn(1, 3, 960, 960, generator=g)}
    if kind == "sam2":
        return {"pixel_values": torch.randn(1, 3, 1024, 1024, generator=g),
                "input_points": torch.tensor([[[[500.0, 400.0]]]]), "input_labels": torch.tensor([[[1]]])}
    if kind == "sam3":
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids),
                "pixel_values": torch.randn(1, 3, 1008, 1008, generator=g)}
    if kind == "grounding-dino":
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids),
                "pixel_values": torch.randn(1, 3, 800, 1200, generator=g)}
    return {"input_ids": ids, "pixel_values": torch.randn(1, 3, 352, 352, generator=g)}  # clipseg


def _model(folder: Path):
    import transformers

    config = transformers.AutoConfig.from_pretrained(folder)
    cls = {"owlv2": transformers.Owlv2ForObjectDetection, "sam2": transformers.Sam2Model,
           "sam3": transformers.Sam3Model, "grounding-dino": transformers.GroundingDinoForObjectDetection,
           "clipseg": transformers.CLIPSegForImageSegmentation}[config.model_type]
    return config.model_type, cls.from_pretrained(folder).eval()


def _flat(output) -> list:
    import torch

    values = output.values() if hasattr(output, "values") else output
    found = []
    for value in values:
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, (tuple, list)) or hasattr(value, "values"):
            found.extend(_flat(value))
    return found


def measure(folder: Path) -> None:
    import torch

    from masklens.core.models import attention_split, deformable_split, linear_split
    from masklens.core.models.interrupt import cancel_check, make_interruptible

    kind, model = _model(folder)
    state = {"name": ""}

    def named(name):
        def hook(_module, _args):
            state["name"] = name
        return hook

    for name, module in model.named_modules():
        module.register_forward_pre_hook(named(name or kind))
    make_interruptible(model)
    inputs = _inputs(kind)
    results = {}
    budgets = (attention_split.GROUP_MACS, linear_split.BLOCK_MACS)
    blocks = {"whole": 10**12, "split": deformable_split.QUERY_BLOCK}  # deformable attention's queries
    for label, (heads, rows) in (("whole", (math.inf, math.inf)), ("split", budgets)):
        attention_split.GROUP_MACS, linear_split.BLOCK_MACS = heads, rows
        deformable_split.QUERY_BLOCK = blocks[label]
        marks: list[tuple[float, str]] = []

        def check(marks=marks):
            marks.append((time.perf_counter(), state["name"]))

        start = time.perf_counter()
        with torch.inference_mode(), cancel_check(check):
            output = model(**inputs)
        end = time.perf_counter()
        marks.append((end, "(end)"))
        gaps = [(b[0] - a[0], a[1]) for a, b in zip(marks, marks[1:], strict=False)]
        worst = max(gaps)
        results[label] = _flat(output)
        print(f"{folder.name} ({real_models.size_label(folder)}) [{label}]: pass {end - start:.2f} s, {len(marks) - 1} checks, "
              f"longest gap {worst[0] * 1000:.0f} ms after {worst[1]}", flush=True)
    attention_split.GROUP_MACS, linear_split.BLOCK_MACS = budgets
    deformable_split.QUERY_BLOCK = blocks["split"]
    same = len(results["whole"]) == len(results["split"]) and all(
        torch.equal(a, b) for a, b in zip(results["whole"], results["split"], strict=True))
    print(f"{folder.name} ({real_models.size_label(folder)}): outputs bitwise equal whole vs split: {same} "
          f"({len(results['whole'])} tensors)", flush=True)


def main() -> None:
    from masklens.core.cache.predictions import default_cache_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="checkpoint folder names under bench-models/")
    parser.add_argument("--root", help="the bench-models folder (default: the cache folder's)")
    args = parser.parse_args()
    root = Path(args.root) if args.root else default_cache_dir() / "bench-models"
    names = args.only or ["clipseg-rd64", "owlv2-large", "sam2.1-hiera-large", "grounding-dino-base", "sam3"]
    print(f"torch threads {__import__('torch').get_num_threads()}, load average {os.getloadavg()}")
    for name in names:
        folder = root / name
        if not (folder / "config.json").exists():
            print(f"{name}: no checkpoint under {root} (build it with models_bench.py)")
            continue
        measure(folder)
        print(f"load average {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
