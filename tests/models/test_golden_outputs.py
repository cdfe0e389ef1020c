"""The golden-output guard for real weights (tests/benchmarks/golden_outputs.py).

``test_real_model_outputs_match_the_golden_file`` compares the latest ``make bench-gpu`` run with the
golden one; it is skipped (saying why) until both exist — no GPU and no real weights are available
where this was built. The comparison and the recording flow are tested here on tiny models, so the
guard is known to fail when outputs move."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
import golden_outputs as go  # noqa: E402

from masklens.core.models.registry import create_segmenter  # noqa: E402


def _golden_dir() -> Path:
    return Path(os.environ.get("MASKLENS_GOLDEN_DIR", go.GOLDEN_DIR))


def test_real_model_outputs_match_the_golden_file():
    folder = _golden_dir()
    golden, latest = folder / go.GOLDEN.name, folder / go.LATEST.name
    if not golden.is_file():
        pytest.skip(f"no golden outputs ({golden}): run `make bench-gpu` on a CUDA machine with the real "
                    "weights to create them (none were available where this was built)")
    if not latest.is_file():
        pytest.skip(f"no later run to compare ({latest}): run `make bench-gpu` again")
    g, cur = json.loads(golden.read_text()), json.loads(latest.read_text())
    diffs = go.compare_files(g, cur)
    if not diffs:
        pytest.skip("no backend's weights were present in both runs")
    assert not any(diffs.values()), json.dumps(diffs, indent=1)


@pytest.fixture(scope="module")
def images():
    picked = go.golden_images()
    return {k: picked[k] for k in (f"demo/{go.DEMO_IMAGES[0]}", next(k for k in picked if k.startswith("photo/")))}


def test_compare_on_tiny_sam3(tiny_sam3, images):
    seg = create_segmenter("sam3", weights=str(tiny_sam3), device="cpu", score_threshold=0.0)
    golden = go.record(seg, images)
    assert sum(len(i["scores"]) for i in golden["items"]) > 0
    assert len(golden["provenance"]["checkpoints"]["checkpoint_sha256"]) == 64
    # a second run of the same model on the same images agrees
    again = go.record(create_segmenter("sam3", weights=str(tiny_sam3), device="cpu", score_threshold=0.0), images)
    assert go.compare(golden, again) == []
    # other mask threshold: the masks move and the guard says which
    moved = go.record(
        create_segmenter("sam3", weights=str(tiny_sam3), device="cpu", score_threshold=0.0, mask_threshold=0.52),
        images,
    )
    diffs = go.compare(golden, moved)
    assert diffs and all("mask IoU" in d for d in diffs)


def test_compare_tolerances_and_structure(tiny_sam3, images):
    seg = create_segmenter("sam3", weights=str(tiny_sam3), device="cpu", score_threshold=0.0)
    golden = go.record(seg, images)
    item = next(i for i in golden["items"] if len(i["scores"]) >= 2)
    where = f"{item['image']} '{item['prompt']}'"

    def edited(change):
        out = copy.deepcopy(golden)
        change(next(i for i in out["items"] if (i["image"], i["prompt"]) == (item["image"], item["prompt"])), out)
        return out

    assert go.compare(golden, edited(lambda i, _: i["scores"].__setitem__(0, i["scores"][0] + 0.005))) == []
    diffs = go.compare(golden, edited(lambda i, _: i["scores"].__setitem__(0, i["scores"][0] + 0.02)))
    assert diffs == [f"{where}: instance 0 score {item['scores'][0]:.4f} -> {item['scores'][0] + 0.02:.4f}"]
    diffs = go.compare(golden, edited(lambda i, _: (i["scores"].pop(0), i["masks"].pop(0))))
    assert diffs  # a lost instance shifts the rest: reported
    diffs = go.compare(golden, edited(lambda i, out: out["items"].remove(i)))
    assert diffs == [f"{where}: missing from the later run"]
    # an instance right at the threshold may come and go between runs: tolerated
    borderline = edited(lambda i, _: (i["scores"].append(0.005), i["masks"].append(i["masks"][0])))
    assert go.compare(golden, borderline) == []
    firm = edited(lambda i, _: (i["scores"].append(0.5), i["masks"].append(i["masks"][0])))
    assert "only in the later run" in go.compare(golden, firm)[0]
    other = edited(lambda i, out: out["provenance"]["checkpoints"].update(checkpoint_sha256="0" * 64))
    assert "not comparable" in go.compare(golden, other)[0]


@pytest.mark.slow
def test_bench_records_then_compares(tiny_clipseg, tmp_path, capsys):
    """The benchmark script's flow on the CPU: the first run writes the golden file; a later run
    whose outputs differ from it reports the difference and exits 1."""
    spec = importlib.util.spec_from_file_location("gpu_models", BENCH / "gpu_models.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    argv = ["--device", "cpu", "--backends", "clipseg", "--size", "96", "--prompts", "2",
            "--weights", f"clipseg={tiny_clipseg}", "--option", "clipseg.score_threshold=0.3",
            "--golden-dir", str(tmp_path)]
    assert bench.main(argv) == 0
    golden = tmp_path / "real_models.json"
    data = json.loads(golden.read_text())
    assert set(data["backends"]) == {"clipseg"} and len(data["images"]) == len(go.DEMO_IMAGES) + len(go.PHOTOS)
    assert "written to" in capsys.readouterr().out
    item = next(i for i in data["backends"]["clipseg"]["items"] if i["scores"])
    item["scores"][0] += 0.1
    golden.write_text(json.dumps(data))
    assert bench.main(argv) == 1
    out = capsys.readouterr().out
    assert "clipseg: 1 difference(s)" in out and f"{item['image']} '{item['prompt']}': instance 0 score" in out
    assert (tmp_path / "real_models.latest.json").is_file()
