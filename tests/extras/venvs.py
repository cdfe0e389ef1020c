"""Fresh venvs per extra, as a user gets them: the wheel built once from a copy of the checkout,
installed with ``--no-deps`` plus the core dependencies of pyproject.toml (and, for an extra,
that extra's own requirements) from the package index; pip's cache keeps re-runs fast. Shared
by the tests of this folder for the whole session (each venv is built once)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def user_env() -> dict[str, str]:
    """This environment without PYTHONPATH: a venv's programs run the installed wheel, never
    the checkout a developer's PYTHONPATH points at."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    kw.setdefault("timeout", 900)
    kw.setdefault("env", user_env())
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def checked(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    out = run(cmd, **kw)
    assert out.returncode == 0, f"{cmd}\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}"
    return out


def pip(bin_dir: Path) -> list[str]:
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(bin_dir / "python")]


def extra_requirements(extra: str) -> list[str]:
    """The requirements of ``[extra]`` as pyproject.toml lists them (nested extras expanded)."""
    out = []
    for req in PYPROJECT["project"]["optional-dependencies"][extra]:
        m = re.fullmatch(r"masklens\[(.+)\]", req)
        out += [r for e in m.group(1).split(",") for r in extra_requirements(e)] if m else [req]
    return out


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built from a copy (nothing is written into the working tree)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for name in ("core", "gui", "resources", "docs", "packaging/entry"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    checked([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
             "-w", str(tmp / "dist"), str(src)])
    (found,) = (tmp / "dist").glob("masklens-*.whl")
    return found


def make_venv(where: Path, wheel: Path, extra: str | None = None, *, base: Path | None = None) -> Path:
    """A fresh venv at ``where`` with the wheel, the core dependencies and ``extra``'s; its bin.

    ``base``: the bin of a core venv whose site-packages this one reads through a ``.pth`` file
    (the core dependencies are then not unpacked a second time; pip resolves the extra against
    them exactly as in one venv). Its own site-packages comes first, so ``masklens`` and the
    extra's packages are this venv's."""
    # a venv without its own pip, filled by this pip (--python): saves ensurepip and byte-compiling
    checked([sys.executable, "-m", "venv", "--without-pip", str(where)])
    bin_dir = where / "bin"
    if base is not None:
        (site,) = where.glob("lib/python*/site-packages")
        (base_site,) = base.parent.glob("lib/python*/site-packages")
        (site / "masklens-core-venv.pth").write_text(f"{base_site}\n")
    install = [*pip(bin_dir), "install", "-q", "--no-compile"]
    # --ignore-installed: the core venv's masklens is visible through the .pth; this venv gets its
    # own (and its `masklens` script), the core venv's copy is left alone
    checked([*install, "--no-deps", *(["--ignore-installed"] if base is not None else []), str(wheel)])
    core = PYPROJECT["project"]["dependencies"]
    checked([*install, *core, *(extra_requirements(extra) if extra else [])])
    return bin_dir


@pytest.fixture(scope="session")
def core_venv(tmp_path_factory, wheel) -> Path:
    """The core install: the wheel and the core dependencies only."""
    return make_venv(tmp_path_factory.mktemp("core-install") / "venv", wheel)


@pytest.fixture(scope="session")
def hub_venv(tmp_path_factory, wheel, core_venv) -> Path:
    """Core + ``[hub]`` (huggingface_hub alone), the core dependencies read from the core venv."""
    return make_venv(tmp_path_factory.mktemp("hub-install") / "venv", wheel, "hub", base=core_venv)


@pytest.fixture(scope="session")
def gui_venv(tmp_path_factory, wheel, core_venv) -> Path:
    """Core + ``[gui]`` (PySide6-Essentials, superqt), the core dependencies read from the core venv."""
    return make_venv(tmp_path_factory.mktemp("gui-install") / "venv", wheel, "gui", base=core_venv)
