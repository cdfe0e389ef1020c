"""Which extra installs which library is read from masklens' own metadata (the ``extra == …``
markers pyproject.toml's optional dependencies become), not from a table kept by hand; a library
of several extras is named by the smallest (huggingface_hub: [hub], not [models]) unless the
caller needs another."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from masklens.core.runtime import extras

ROOT = Path(__file__).resolve().parents[2]
DECLARED = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _dists(extra: str) -> list[str]:
    return [re.match(r"[A-Za-z0-9._-]+", r).group(0) for r in DECLARED[extra] if not r.startswith("masklens")]


@pytest.mark.parametrize("extra", extras.FEATURE_EXTRAS)
def test_each_extra_requires_what_pyproject_declares(extra):
    assert extras.extra_requirements()[extra] == tuple(_dists(extra))
    assert len(extras.extra_modules()[extra]) == len(_dists(extra))


def test_the_import_names_of_the_declared_distributions():
    assert extras.extra_modules()["gui"] == ("PySide6", "superqt")
    assert extras.extra_modules()["sam2"] == ("sam2", "hydra", "iopath")
    assert extras.extra_modules()["hub"] == ("huggingface_hub",)


def test_a_library_of_two_extras_is_named_by_the_smaller_unless_asked():
    assert extras.extra_of("huggingface_hub") == "hub"
    assert extras.extra_of("huggingface_hub.file_download") == "hub"
    assert extras.extra_of("huggingface_hub", within="models") == "models"
    assert extras.extra_of("torch.nn") == "models" and extras.extra_of("PySide6.QtCore") == "gui"
    assert extras.extra_of("numpy") is None  # a core dependency: no extra
