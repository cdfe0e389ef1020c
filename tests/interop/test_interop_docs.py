"""The examples of docs/interop.md run and print what the page says (its ``pycon`` blocks, in
order, in one namespace; outputs go to a scratch folder that sees the repository's resources/)."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "interop.md"
BLOCK = re.compile(r"```(?P<lang>\w*)\n(?P<body>.*?)```", re.S)


def test_the_pycon_examples_run_as_written(tmp_path, monkeypatch):
    (tmp_path / "resources").symlink_to(ROOT / "resources")
    monkeypatch.chdir(tmp_path)
    text = PAGE.read_text()
    parser, globs, ran = doctest.DocTestParser(), {}, 0
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for m in BLOCK.finditer(text):
        if m["lang"] != "pycon":
            continue
        line = text.count("\n", 0, m.start()) + 1
        test = parser.get_doctest(m["body"], globs, f"interop.md:{line}", str(PAGE), line)
        result = runner.run(test, clear_globs=False)
        globs.update(test.globs)
        assert result.failed == 0, f"docs/interop.md example at line {line} failed (see above)"
        ran += result.attempted
    assert ran >= 12
    assert (tmp_path / "exported" / "cafe" / "masklens-export.json").is_file()


def test_the_documented_fiftyone_lines_are_the_ones_the_test_runs():
    text = PAGE.read_text()
    test = (ROOT / "tests" / "interop" / "test_export.py").read_text()
    for call in ("fo.Dataset.from_dir(", "ds.merge_dir(", 'labels_path="predictions/',
                 "dataset_type=fo.types.COCODetectionDataset", 'label_types="segmentations"',
                 "dataset_type=fo.types.CSVDataset", 'labels_path="samples.csv"',
                 'labels_path="labels.json"', 'label_field="ground_truth"'):
        assert call in text and call in test, call


def test_the_offline_error_shown_is_the_real_one(monkeypatch, tmp_path):
    import pytest

    pytest.importorskip("huggingface_hub", reason="huggingface_hub comes with the [models] extra")
    from masklens.core.errors import MasklensError
    from masklens.core.interop.hub import resolve

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(MasklensError) as err:
        resolve("hf://datasets/acme/cafe/ann.json")
    assert f"masklens: error: {err.value}" in PAGE.read_text()
