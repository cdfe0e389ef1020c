"""The name classes of the fuzzer (tests/fuzz/fuzz_names.py), one short seeded round: every hostile
``hf://`` form once against a REAL offline Hugging Face cache (kinds and arguments in turn), and
every hostile image name once through `masklens predict KIND --model demo` (the command that
decodes every image), each a real subprocess under the fuzzer's memory cap and time limit.
Each must be a clean one-line error or a valid run — never a traceback, a signal, a hang, a
refused valid form or a read outside the root. `make fuzz` draws the same classes at random."""

from __future__ import annotations

import random
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import fuzz_names as fh
import pytest
from fuzz_cases import KINDS, make_workspace
from fuzz_runner import FAILING, classify, run_cli

pytest.importorskip("huggingface_hub", reason="the hub class needs huggingface_hub (the [hub] extra)")

SEED = 2026
pytestmark = pytest.mark.slow


def _hub_case(i: int, name: str, scratch: Path) -> tuple[str, str, str]:
    rng = random.Random(f"{SEED}:hub:{i}")
    kind = KINDS[i % len(KINDS)]
    ws = make_workspace(Path(tempfile.mkdtemp(dir=scratch)), kind, "score")
    choices = [j for j in fh._hub_arguments(ws) if name in fh.hub_variants(fh.HUB_FLAGS[ws.argv[j - 1]])]
    detail = fh.apply_hub_variant(ws, rng.choice(choices), name)
    rc, err = run_cli(ws.full_argv(), env=ws.env)
    return detail, classify(rc, err, ws), err.strip()[-600:]


def _image_case(i: int, name: str, scratch: Path) -> tuple[str, str, str]:
    kind = fh.IMAGE_NAME_KINDS[i % len(fh.IMAGE_NAME_KINDS)]
    ws = make_workspace(Path(tempfile.mkdtemp(dir=scratch)), kind, "predict")
    detail = fh.apply_image_name(ws, name, pick=random.Random(f"{SEED}:img:{i}").randrange(100))
    rc, err = run_cli(ws.full_argv(), env=ws.env)
    return f"{kind} {detail}", classify(rc, err, ws), err.strip()[-600:]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> list[tuple[str, str, str]]:
    scratch = tmp_path_factory.mktemp("names")
    names = sorted({**fh.HUB_VARIANTS, **fh.JSON_ONLY})
    with ThreadPoolExecutor(2) as pool:
        jobs = [pool.submit(_hub_case, i, n, scratch) for i, n in enumerate(names)]
        jobs += [pool.submit(_image_case, i, n, scratch) for i, n in enumerate(fh.IMAGE_NAME_VARIANTS)]
        return [j.result() for j in jobs]


def test_no_traceback_hang_refused_valid_or_read_outside_the_root(outcomes):
    bad = [f"{d} -> {o}: {e}" for d, o, e in outcomes if o in FAILING or o == "outside root"]
    assert not bad, "\n\n".join(bad)


def test_the_round_covers_every_form_and_both_answers(outcomes):
    assert len(outcomes) == len({**fh.HUB_VARIANTS, **fh.JSON_ONLY}) + len(fh.IMAGE_NAME_VARIANTS)
    kinds = {o for _, o, _ in outcomes}
    assert {"clean error", "valid"} <= kinds
    valid = {d.split(":")[0] for d, o, _ in outcomes if o == "valid"}
    assert any("pull-request ref" in v for v in valid) and any("model form" in v for v in valid)
    assert any("255 bytes" in v for v in valid)


def test_the_cache_is_one_huggingface_hub_reads(tmp_path):
    """The fuzz cache is a real one: scan_cache_dir reads both revisions without warnings."""
    import huggingface_hub as hf

    ws = make_workspace(tmp_path, "cafe")
    snapshot = fh.lay_out_cache(ws)
    info = hf.scan_cache_dir(ws.env["HF_HUB_CACHE"])
    assert not info.warnings
    demo = next(r for r in info.repos if r.repo_id == fh.DATASET)
    assert {r.commit_hash for r in demo.revisions} == {fh.MAIN, fh.PR}
    assert (snapshot / "ann.json").is_symlink() and (snapshot / "ann.json").resolve().parent.name == "blobs"
