"""Model load time against plain ``from_pretrained`` (part of `make bench`).

On a real-size random-weight checkpoint pair of ≥ 1 GB built once from the real configs
(OWLv2 ViT-L/14 + SAM 2.1 Hiera-L, 2.6 GB, tests/benchmarks/real_models.py, kept in the cache
folder's bench-models/), in one process with the page cache warm:

- the plain way: both processors and models with ``from_pretrained`` (what masklens' load does
  besides the hash);
- masklens with the checkpoint hash remembered (every load after the first, any process);
- masklens on checkpoints it has not seen (the hash computed in the background), and when the
  hash would be ready;
- the previous way: hashing before loading (load + the full sha256 of the files).

    python tests/benchmarks/bench_model_load.py [--cache DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", help="where the checkpoints are built once (default: the masklens "
                        "cache folder's bench-models/)")
    args = parser.parse_args()
    from masklens.core.cache.predictions import default_cache_dir

    cache = Path(args.cache) if args.cache else default_cache_dir() / "bench-models"
    import models_bench
    import plain_pipelines

    from masklens.core.cache import file_hashes
    from masklens.core.models.registry import create_segmenter

    folders, options = models_bench.build("owlv2-sam2", cache)  # built once; page cache warmed
    os.environ["MASKLENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-load-")  # an empty hash memo
    models_bench.warm_up("owlv2-sam2", options, "cpu")
    size = sum(f.stat().st_size for d in folders for f in d.iterdir() if f.suffix == ".safetensors")

    def plain() -> float:
        t0 = time.perf_counter()
        run = plain_pipelines.PIPELINES["owlv2-sam2"](folders, "cpu")
        seconds = time.perf_counter() - t0
        del run
        return seconds

    def masklens() -> tuple[float, float, object]:
        seg = create_segmenter("owlv2-sam2", **options, device="cpu")
        t0 = time.perf_counter()
        seg.ensure_loaded()
        loaded = time.perf_counter() - t0
        for ckpt in seg._checkpoints():
            _ = ckpt.sha256  # waits for a background hash
        return loaded, time.perf_counter() - t0, seg

    plain()  # once untimed: the first load in a process pays one-time set-up
    file_hashes.forget_in_memory()
    t_new, t_new_hash, seg = masklens()  # never seen: the hash runs beside the load
    seg.unload()
    t0 = time.perf_counter()
    for d in folders:
        for f in sorted(d.iterdir()):
            if f.is_file():
                with f.open("rb") as fh:
                    digest = hashlib.sha256()
                    while chunk := fh.read(1 << 22):
                        digest.update(chunk)
    t_hash = time.perf_counter() - t0
    plains, knowns = [], []
    for _ in range(3):  # interleaved, so that a busy moment of the machine hits both alike
        plains.append(plain())
        file_hashes.forget_in_memory()  # what another process knows: the memo file
        loaded, _, seg = masklens()
        seg.unload()
        knowns.append(loaded)
    t_plain, t_known = statistics.median(plains), statistics.median(knowns)
    import real_models

    tag = f"[owlv2-sam2, {real_models.size_label(*folders)}]"
    print(f"model load, OWLv2-L + SAM 2.1 Hiera-L ({size / 1e9:.2f} GB of safetensors, random weights, CPU)  {tag}")
    print(f"  masklens, hash remembered {t_known:5.2f} s | plain from_pretrained {t_plain:5.2f} s | "
          f"diff {t_known - t_plain:+.2f} s (target ≤ +0.5) | ratio {t_known / t_plain:.2f}x "
          f"(medians of 3 interleaved; masklens {min(knowns):.2f}–{max(knowns):.2f} s, plain "
          f"{min(plains):.2f}–{max(plains):.2f} s)  {tag}")
    print(f"  masklens, new checkpoint {t_new:5.2f} s (hash in the background, ready at {t_new_hash:5.2f} s) | "
          f"previous way, hash then load ≈ {t_hash + t_plain:5.2f} s (sha256 alone {t_hash:5.2f} s)  {tag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
