"""``hf://`` paths on a Hugging Face cache laid out by huggingface_hub's own functions (blobs/
named by content hash, snapshots/<commit>/ of relative symlinks into blobs/, refs/main and
refs/pr/1): folder arguments read through the symlinks, ``..`` is refused, the Hub's own
parser reads ``@refs/pr/1`` and the ``hf://OWNER/NAME`` model form. No network (offline)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hub_layout import lay_out

import masklens.core as ml
from masklens.core.errors import MasklensError
from masklens.core.interop import hub

hf = pytest.importorskip("huggingface_hub", reason="huggingface_hub is the [hub] extra")
from huggingface_hub import file_download  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
D = ROOT / "resources" / "demo"
MAIN = "a" * 40
PR = "b" * 40


def _lay_out(cache: Path, repo_id: str, repo_type: str, commit: str, files: dict[str, Path]) -> Path:
    """``files`` in ``cache`` as huggingface_hub's downloads lay them out (tests/hub_layout.py)."""
    return lay_out(cache, repo_id, repo_type, commit, files)


@pytest.fixture
def real_cache(tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    files = {p.relative_to(D).as_posix(): p
             for sub in ("cafe", "hallusegbench") for p in sorted((D / sub).rglob("*")) if p.is_file()}
    storage = _lay_out(cache, "acme/demo", "dataset", MAIN, files)
    file_download._cache_commit_hash_for_specific_revision(str(storage), "main", MAIN)
    pr_files = {"cafe/ann.json": D / "cafe/ann.json", "cafe/pred_demo.json": D / "cafe/pred_demo.json"}
    _lay_out(cache, "acme/demo", "dataset", PR, pr_files)
    file_download._cache_commit_hash_for_specific_revision(str(storage), "refs/pr/1", PR)
    model = _lay_out(cache, "acme/cafe-preds", "model", MAIN, pr_files)
    file_download._cache_commit_hash_for_specific_revision(str(model), "main", MAIN)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


def test_the_cache_is_what_huggingface_hub_itself_reads(real_cache):
    info = hf.scan_cache_dir(real_cache)
    assert not info.warnings
    repos = {(r.repo_type, r.repo_id): r for r in info.repos}
    demo = repos["dataset", "acme/demo"]
    assert {rev.commit_hash for rev in demo.revisions} == {MAIN, PR}
    main = next(rev for rev in demo.revisions if rev.commit_hash == MAIN)
    assert "hallusegbench/masks/factual" in {f.file_path.parent.relative_to(main.snapshot_path).as_posix()
                                             for f in main.files}
    snap = main.snapshot_path / "hallusegbench" / "data.json"
    assert snap.is_symlink() and snap.resolve().parent.name == "blobs"


def test_folder_arguments_read_through_the_snapshot_symlinks(real_cache):
    local = ml.score("hallusegbench", data=str(D / "hallusegbench/data.json"),
                     pred_dir=str(D / "hallusegbench/pred_demo"))
    repo = "hf://datasets/acme/demo"
    remote = ml.score("hallusegbench", data=f"{repo}/hallusegbench/data.json",
                      root=f"{repo}/hallusegbench/", pred_dir=f"{repo}/hallusegbench/pred_demo")
    assert remote.summary == local.summary


def test_images_folder_from_the_cache(real_cache):
    repo = "hf://datasets/acme/demo"
    bench = ml.load_benchmark("cafe", ann=f"{repo}/cafe/ann.json", images=f"{repo}/cafe/images")
    paths = [Path(ref.path) for s in bench.samples for ref in s.images.values()]
    assert paths and all(p.is_file() and p.is_symlink() for p in paths)


@pytest.mark.parametrize("url", [
    "hf://datasets/acme/demo/../../../../elsewhere/images",
    "hf://datasets/acme/demo/cafe/../cafe/ann.json",
    "hf://datasets/acme/demo/./cafe/ann.json",
    "hf://datasets/acme/demo/..\\..\\..\\..\\elsewhere\\ann.json",  # a traceback before (fuzz, names)
    "hf://datasets/acme/demo/cafe\\..\\cafe/ann.json",
])
def test_dot_segments_are_refused(real_cache, tmp_path, url):
    (real_cache.parent / "elsewhere" / "images").mkdir(parents=True)
    with pytest.raises(MasklensError, match="in a Hugging Face path"):
        hub.resolve(url, folder=True)
    with pytest.raises(MasklensError, match="in a Hugging Face path"):
        hub.resolve(url)


def test_a_symlink_out_of_the_snapshot_is_still_refused(real_cache, tmp_path):
    """Only the repository's own blobs count as inside: a link elsewhere is refused."""
    snap = real_cache / "datasets--acme--demo" / "snapshots" / MAIN / "hallusegbench" / "masks" / "factual"
    victim = sorted(snap.iterdir())[0]
    outside = tmp_path / "secret.png"
    outside.write_bytes(victim.read_bytes())
    victim.unlink()
    victim.symlink_to(outside)
    repo = "hf://datasets/acme/demo"
    with pytest.raises(MasklensError, match="leads outside its root"):
        ml.load_benchmark("hallusegbench", data=f"{repo}/hallusegbench/data.json",
                          root=f"{repo}/hallusegbench/")


def test_the_hub_parser_reads_pr_revisions_and_the_model_form(real_cache):
    pr = hub.resolve("hf://datasets/acme/demo@refs/pr/1/cafe/ann.json")
    assert f"snapshots/{PR}/cafe/ann.json" in pr.as_posix()
    model = hub.resolve("hf://acme/cafe-preds/cafe/pred_demo.json")
    assert "models--acme--cafe-preds" in model.as_posix()
    p = hub.parse("hf://datasets/acme/demo@refs/pr/1/cafe/ann.json")
    assert (p.repo_type, p.repo_id, p.revision, p.path) == ("dataset", "acme/demo", "refs/pr/1", "cafe/ann.json")


def test_without_huggingface_hub_the_hint_names_the_hub_extra(tmp_path):
    blocker = ROOT / "tests" / "extras"
    code = (f"import sys; sys.path.insert(0, {str(blocker)!r}); import blocked_imports; "
            "blocked_imports.block(['huggingface_hub']); from masklens.core.cli import main; "
            "sys.exit(main(['score', 'cafe', '--ann', 'hf://datasets/a/b/ann.json', '--pred', 'p.json']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         timeout=120)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'masklens[hub]'" in lines[0], out.stderr


def test_a_bucket_is_not_a_repository():
    with pytest.raises(MasklensError, match="bucket, not a repository"):
        hub.parse("hf://buckets/acme/scratch/ann.json")


def test_the_fallback_parser_for_an_older_huggingface_hub_agrees_on_the_common_forms():
    for url in ("hf://datasets/acme/demo@v1/cafe/ann.json", "hf://acme/cafe-preds/pred.json",
                "hf://models/acme/m/x.json", "hf://spaces/acme/s/app.json"):
        assert hub._parse_by_hand(url) == hub.parse(url), url


@pytest.mark.parametrize("url", [
    "hf://datasets/acme/" + "n" * 300 + "/cafe/ann.json",  # huggingface_hub's repo-id check
    "hf://datasets/acme/demo/" + "x" * 5000 + "/ann.json",
])
def test_names_the_hub_refuses_are_one_clean_error(real_cache, url):
    with pytest.raises(MasklensError):
        hub.resolve(url)
