"""The core install, as a user gets it: the wheel, installed with ``--no-deps`` plus only the core
dependencies of pyproject.toml into a fresh venv (from the package index; pip's cache keeps re-runs
fast). There, ``masklens score`` works on every demo kind and gives the numbers the full install
gives, ``report`` and ``predict --model demo`` work, and the commands that need an extra exit 2
with one line naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from venvs import PYPROJECT, checked, pip, run, user_env

import masklens.core as ml
from masklens.core.kinds.demo import demo_files

pytestmark = pytest.mark.slow


_run, _checked, _pip = run, checked, pip


@pytest.fixture(scope="module")
def venv(core_venv) -> Path:
    """The core venv (tests/extras/conftest.py: built once per session, shared)."""
    return core_venv


def _env(tmp_path: Path) -> dict[str, str]:
    return {**user_env(), "MASKLENS_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1",
            "MPLBACKEND": "Agg", "QT_QPA_PLATFORM": "offscreen"}


def test_the_venv_holds_the_core_dependencies_and_nothing_of_the_extras(venv):
    _checked([*_pip(venv), "check"])  # the wheel's requirements are met
    listed = _checked([*_pip(venv), "list", "--format=json"]).stdout
    names = {d["name"].lower().replace("_", "-") for d in json.loads(listed)}
    assert "masklens" in names
    for extra in ("torch", "torchvision", "transformers", "huggingface-hub", "pyside6-essentials",
                  "superqt", "sam2", "ray"):
        assert extra not in names


def test_score_every_demo_kind_gives_the_numbers_of_the_full_install(venv, tmp_path):
    code = ("import json; from masklens.core.kinds.demo import demo_argv, demo_kinds; "
            "print(json.dumps({k: demo_argv(k) for k in demo_kinds()}))")
    argvs = json.loads(_checked([str(venv / "python"), "-c", code]).stdout)
    assert set(argvs) == {"cafe", "pcs", "hallusegbench", "cgebench", "r2sm", "ovs"}
    for kind, argv in argvs.items():
        assert "site-packages" in argv[1]  # the demo installed with the wheel
        out = tmp_path / f"{kind}.json"
        _checked([str(venv / "masklens"), "score", kind, *argv, "--out", str(out)], env=_env(tmp_path))
        here = ml.score(kind, **demo_files(kind))
        assert json.loads(out.read_text())["summary"] == json.loads(json.dumps(here.summary)), kind


def test_report_and_the_demo_model_work(venv, tmp_path):
    code = ("import json; from masklens.core.kinds.demo import demo_argv; "
            "print(json.dumps([demo_argv('cafe'), demo_argv('cafe', with_predictions=False)]))")
    full, gt_only = json.loads(_checked([str(venv / "python"), "-c", code]).stdout)
    env = _env(tmp_path)
    _checked([str(venv / "masklens"), "report", "cafe", *full, "--out", str(tmp_path / "report")], env=env)
    assert "<html" in (tmp_path / "report" / "report.html").read_text().lower()
    pred = tmp_path / "pred.json"
    _checked([str(venv / "masklens"), "predict", "cafe", "--model", "demo", *gt_only, "--out", str(pred),
              "--quiet"], env=env)
    assert json.loads(pred.read_text())


def test_version_comes_from_the_installed_metadata_and_python_m_masklens_works(venv, tmp_path):
    out = _checked([str(venv / "masklens"), "--version"]).stdout.strip()
    assert out == f"masklens {PYPROJECT['project']['version']}"
    same = _checked([str(venv / "python"), "-m", "masklens", "--version"], cwd=tmp_path).stdout.strip()
    assert same == out


@pytest.mark.parametrize(("argv", "extra"), [
    (["models"], "hub"),  # listing reads the hub cache only: the 30 MB extra, not [models]
    (["gui", "--demo"], "gui"),
    (["predict", "cafe", "--model", "sam3", "--ann", "a.json", "--out", "p.json"], "models"),
])
def test_commands_that_need_an_extra_exit_2_with_one_line(venv, tmp_path, argv, extra):
    out = _run([str(venv / "masklens"), *argv], env=_env(tmp_path), cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines() == [out.stderr.strip()]
    assert f"pip install 'masklens[{extra}]'" in out.stderr


def test_import_masklens_core_and_its_api_in_the_core_install(venv):
    code = ("import sys, masklens.core as ml; ml.score; ml.Scorer; ml.segmenter; ml.predict\n"
            "print(sorted(m for m in ('torch', 'transformers', 'PySide6', 'huggingface_hub') "
            "if m in sys.modules))")
    assert _checked([str(venv / "python"), "-c", code]).stdout.strip() == "[]"
