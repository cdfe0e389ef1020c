"""Scaling of `predict --ray`: a CAFE-shaped synthetic benchmark (2,000 images, 2 prompts each,
the demo scenes copied under new names) with the demo segmenter, in one run:

- single process (`run_benchmark`), the baseline;
- Ray with 1 and 2 segmenter actors (local Ray, 2 CPUs), as throughput ratios to the baseline;
- the per-item overhead of the Ray path in ms, and where it goes: the fixed start (actor
  start, model creation, pipeline start), the workers' own time per image (read, segment,
  encode results; measured on the actors), result (de)serialisation, and the rest (Ray Data
  scheduling, transport, the driver) after the first result.

Plain script (run by `make bench`); `python bench_ray.py N` for N images. No cache: the model
work itself is compared.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

from masklens.core import api  # noqa: E402
from masklens.core.inference.runner import load_image, plan_images, run_benchmark  # noqa: E402
from masklens.core.kinds.demo import demo_files  # noqa: E402
from masklens.core.models.registry import create_segmenter  # noqa: E402


def synthetic_cafe(root: Path, n_images: int) -> tuple[Path, Path]:
    """A CAFE annotation over ``n_images`` files (copies of the demo's), 2 prompts per file."""
    files = demo_files("cafe", with_predictions=False)
    ann = json.loads(Path(files["ann"]).read_text())
    src = Path(files["images"])
    images_dir = root / "images"
    images_dir.mkdir(parents=True)
    by_file: dict[str, list[dict]] = {}
    for im in ann["images"]:
        by_file.setdefault(im["file_name"], []).append(im)
    anns_of: dict[int, list[dict]] = {}
    for a in ann["annotations"]:
        anns_of.setdefault(a["image_id"], []).append(a)
    names = sorted(by_file)
    out_images, out_anns, next_ann = [], [], 1
    for k in range(n_images):
        name = names[k % len(names)]
        new_name = f"{k:06d}.png"
        shutil.copyfile(src / name, images_dir / new_name)
        for im in by_file[name]:
            offset = 1_000_000_000 if im["id"] >= 1_000_000_000 else 0
            new_id = offset + k + 1
            rec = {**im, "id": new_id, "file_name": new_name}
            if "fp_source_id" in rec:
                rec["fp_source_id"] = k + 1
            out_images.append(rec)
            for a in anns_of.get(im["id"], []):
                out_anns.append({**a, "id": next_ann, "image_id": new_id})
                next_ann += 1
    target = root / "ann.json"
    target.write_text(json.dumps({**ann, "images": out_images, "annotations": out_anns}))
    return target, images_dir


class Clock:
    """progress(done, total) recording when the first and the last result came."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.first = self.last = None

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if done and self.first is None:
            self.first = now
        self.last = now


def main() -> None:
    import functools

    import orjson
    import ray

    from masklens.core.cache.entries import result_from_json, result_to_json
    from masklens.core.inference.ray_runner import RayConfig, run_benchmark_ray
    from masklens.core.inference.runner import RunStats, request_for, segment_image

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    tmp = Path(tempfile.mkdtemp(prefix="masklens-bench-ray-"))
    try:
        ann, images = synthetic_cafe(tmp, n)
        bench = api.load_benchmark("cafe", ann=ann, images=images)
        jobs = plan_images(bench, images)
        prompts = sum(len(j.prompts) for j in jobs)
        print(f"synthetic CAFE: {len(jobs)} images, {prompts} prompts (demo segmenter, no cache)")
        seg = create_segmenter("demo")

        t = time.perf_counter()
        single = run_benchmark(seg, bench, backend="demo", images_dir=images)
        t_single = time.perf_counter() - t
        per_item = 1000 * t_single / len(jobs)
        print(f"single process            : {t_single:7.2f} s  {len(jobs) / t_single:7.1f} images/s  "
              f"({per_item:.2f} ms/image)")

        # serialisation of one image's results, both ways (actor -> driver), measured in process
        sample = jobs[: min(200, len(jobs))]
        answers = [segment_image(seg, load_image(j.path), [request_for(p) for p in j.prompts], backend="demo")
                   for j in sample]
        t = time.perf_counter()
        for res in answers:
            text = orjson.dumps([result_to_json(r) for r in res]).decode()
            [result_from_json(r) for r in orjson.loads(text)]
        ser_ms = 1000 * (time.perf_counter() - t) / len(sample)

        t = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100 * 1024 * 1024,
                 log_to_driver=False)
        t_init = time.perf_counter() - t
        print(f"ray.init (local, 2 CPUs)  : {t_init:7.2f} s (once per run, not in the ratios)")
        rows = []
        for workers in (1, 2):
            clock, stats = Clock(), RunStats()
            runner = functools.partial(run_benchmark_ray, config=RayConfig(workers=workers, batch_size=4))
            out = runner(seg, bench, backend="demo", images_dir=images, progress=clock, stats=stats)
            total = clock.last - clock.t0
            assert set(out.by_prompt) == set(single.by_prompt)
            work_ms = 1000 * stats.worker_seconds / len(jobs)
            rows.append((workers, total, clock.first - clock.t0, work_ms))
            print(f"ray, {workers} worker(s), batch 4: {total:7.2f} s  {len(jobs) / total:7.1f} images/s  "
                  f"= {t_single / total:4.2f}x single process  (first result after "
                  f"{clock.first - clock.t0:.1f} s; worker time {work_ms:.2f} ms/image)")
        ray.shutdown()
        _, total1, first1, work1 = rows[0]
        wall1 = 1000 * total1 / len(jobs)
        steady1 = 1000 * (total1 - first1) / max(1, len(jobs) - 4)
        print(f"ratio 2 workers / 1 worker: {rows[0][1] / rows[1][1]:.2f}x (ideal on 2 cores: 2x)")
        print(f"Ray per-item overhead (1 worker): {wall1 - per_item:+.2f} ms/image against the single "
              f"process ({wall1:.2f} vs {per_item:.2f} ms). Where it goes: fixed start {first1:.1f} s "
              f"(actor start + model creation + pipeline start) = {1000 * first1 / len(jobs):.2f} ms/image "
              f"here; after the first result {steady1:.2f} ms/image of which the worker computed "
              f"{work1:.2f} ms (incl. {ser_ms:.2f} ms result (de)serialisation) and "
              f"{steady1 - work1:+.2f} ms is Ray Data scheduling, transport and the driver")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
