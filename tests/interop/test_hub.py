"""``hf://datasets/OWNER/NAME/path`` benchmark files: read from a pre-populated Hugging Face cache
in offline mode (no network in tests), the same scores as the local files, and clear one-line
errors when the file is not cached or huggingface_hub is not installed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import masklens.core as ml
from masklens.core.cli import main
from masklens.core.errors import MasklensError
from masklens.core.interop import hub

pytest.importorskip("huggingface_hub", reason="huggingface_hub comes with the [models] extra")

ROOT = Path(__file__).resolve().parents[2]
D = ROOT / "resources" / "demo"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
REPO = "hf://datasets/acme/masklens-demo"


@pytest.fixture
def hf_cache(tmp_path, monkeypatch):
    """A Hugging Face hub cache holding the dataset repo acme/masklens-demo at ``main``, laid out as
    huggingface_hub lays it out (refs/main -> commit, snapshots/<commit>/… linking into blobs/)."""
    cache = tmp_path / "hub"
    repo = cache / "datasets--acme--masklens-demo"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    snap = repo / "snapshots" / COMMIT
    for i, src in enumerate([D / "cafe/ann.json", D / "cafe/pred_demo.json"]):
        blob = repo / "blobs" / f"{i:040x}"
        blob.parent.mkdir(exist_ok=True)
        shutil.copy(src, blob)
        link = snap / "cafe" / src.name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(Path("../../../blobs") / blob.name)
    shutil.copytree(D / "hallusegbench", snap / "hallusegbench")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


def test_parse():
    p = hub.parse("hf://datasets/acme/set@v1.0/sub/ann.json")
    assert (p.repo_type, p.repo_id, p.revision, p.path) == ("dataset", "acme/set", "v1.0", "sub/ann.json")
    assert p.download_hint() == "hf download acme/set sub/ann.json --repo-type dataset --revision v1.0"
    assert p.download_hint(folder=True) == \
        "hf download acme/set --include 'sub/ann.json/*' --repo-type dataset --revision v1.0"
    with pytest.raises(MasklensError, match="not a Hugging Face path"):
        hub.parse("hf://acme")
    model = hub.parse("hf://acme/set/ann.json")  # the Hub's model form (no type prefix)
    assert (model.repo_type, model.repo_id, model.path) == ("model", "acme/set", "ann.json")


def test_cached_files_score_as_the_local_ones(hf_cache):
    local = ml.score("cafe", ann=str(D / "cafe/ann.json"), pred=str(D / "cafe/pred_demo.json"))
    remote = ml.score("cafe", ann=f"{REPO}/cafe/ann.json", pred=f"{REPO}/cafe/pred_demo.json")
    assert remote.summary == local.summary
    path = hub.resolve(f"{REPO}/cafe/ann.json")
    assert path.is_relative_to(hf_cache) and path.read_bytes() == (D / "cafe/ann.json").read_bytes()


def test_a_cached_folder_argument(hf_cache):
    local = ml.score("hallusegbench", data=str(D / "hallusegbench/data.json"),
                     pred_dir=str(D / "hallusegbench/pred_demo"))
    remote = ml.score("hallusegbench", data=f"{REPO}/hallusegbench/data.json",
                      root=f"{REPO}/hallusegbench", pred_dir=f"{REPO}/hallusegbench/pred_demo")
    assert remote.summary == local.summary


def test_offline_and_a_folder_not_cached(hf_cache):
    with pytest.raises(MasklensError) as err:
        hub.resolve(f"{REPO}/other/images/", folder=True)
    assert "hf download acme/masklens-demo --include 'other/images/*' --repo-type dataset" in str(err.value)


def test_the_cli_reads_hub_paths(hf_cache, tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["score", "cafe", "--ann", f"{REPO}/cafe/ann.json", "--pred", f"{REPO}/cafe/pred_demo.json",
                 "--out", str(out)]) == 0
    assert out.is_file()


def test_offline_and_not_cached_is_a_clear_error(hf_cache, capsys):
    with pytest.raises(MasklensError) as err:
        hub.resolve(f"{REPO}/cafe/missing.json")
    text = str(err.value)
    assert "not in the Hugging Face cache and HF_HUB_OFFLINE is set" in text
    assert "hf download acme/masklens-demo cafe/missing.json --repo-type dataset" in text
    assert main(["score", "cafe", "--ann", "hf://datasets/other/repo/ann.json",
                 "--pred", str(D / "cafe/pred_demo.json")]) == 2
    assert "hf://datasets/other/repo/ann.json: not in the Hugging Face cache" in capsys.readouterr().err


def test_without_huggingface_hub_one_line_names_the_extra(tmp_path):
    blocker = ROOT / "tests" / "extras"
    code = (f"import sys; sys.path.insert(0, {str(blocker)!r}); import blocked_imports; "
            "blocked_imports.block(['huggingface_hub']); from masklens.core.cli import main; "
            f"sys.exit(main(['score', 'cafe', '--ann', 'hf://datasets/a/b/ann.json', '--pred', 'p.json']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         timeout=120)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'masklens[hub]'" in lines[0], out.stderr


def test_score_with_out_fetches_each_hub_path_once(hf_cache, tmp_path, monkeypatch):
    """The files scored are the files the provenance names: each hf:// path is resolved once (a
    second resolution after scoring could meet a moved branch, or the network gone)."""
    asked: list[str] = []
    plain = hub.resolve

    def counted(path, *args, **kwargs):
        asked.append(str(path))
        return plain(path, *args, **kwargs)

    monkeypatch.setattr(hub, "resolve", counted)
    out = tmp_path / "s.json"
    ml.score("cafe", ann=f"{REPO}/cafe/ann.json", pred=f"{REPO}/cafe/pred_demo.json", out=out)
    assert sorted(asked) == [f"{REPO}/cafe/ann.json", f"{REPO}/cafe/pred_demo.json"]
    assert f"{REPO}/cafe/ann.json" in str(json.loads(out.read_text())["provenance"]["inputs"])


@pytest.mark.parametrize("path", ["HF://datasets/acme/masklens-demo/cafe/images", "s3://bucket/images"])
def test_a_path_with_another_scheme_is_refused_in_one_line(path, capsys):
    """`HF://…` (capitals) or `s3://…` is no local path: read as one it names a folder that is not
    there, which `score` (never opening --images) would let pass unnoticed."""
    argv = ["score", "cafe", "--ann", str(D / "cafe/ann.json"), "--pred", str(D / "cafe/pred_demo.json"),
            "--images", path]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--images {path}" in err[0] and "hf://datasets/" in err[0]
