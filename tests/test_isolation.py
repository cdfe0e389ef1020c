"""The suite writes nothing outside its scratch folder (tests/conftest.py): every setting's
variable inherited from the shell is dropped, the folders point into the scratch folder, and
opening the demo and working on it leaves the checkout's resources/ as it was."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from masklens.core.runtime import config

ROOT = Path(__file__).resolve().parents[1]


def _scratch() -> Path:
    scratch = Path(os.environ["MASKLENS_CACHE_DIR"]).parent
    assert scratch.name.startswith("masklens-tests-")
    assert scratch.parent == Path(tempfile.gettempdir())
    return scratch


def test_every_setting_is_the_default_or_in_the_scratch_folder():
    scratch = _scratch()
    now = config.current()
    for name, value in now.sources.items():
        if value.setting.type == "path":
            assert Path(value.value).is_relative_to(scratch), (name, value)
        else:
            assert value.source == "default", (name, value)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        assert Path(os.environ[var]).is_relative_to(scratch), var
    assert not config.config_path().exists()  # no user config file is read


def test_scoring_and_reviewing_the_demo_write_nothing_into_the_checkout(tmp_path):
    import masklens.core as ml
    from masklens.core.cli import main
    from masklens.core.kinds.demo import demo_files
    from masklens.core.review.locations import default_store_path

    before = {p for p in (ROOT / "resources").rglob("*") if "__pycache__" not in p.parts}
    files = demo_files("cafe")
    assert Path(str(files["ann"])).is_relative_to(ROOT / "resources")  # the checkout's own demo
    result = ml.score("cafe", **files)
    assert result.summary
    store = default_store_path([files["ann"]])
    assert store.is_relative_to(_scratch())  # the demo's verdicts go to the data folder
    assert main(["score", "cafe", "--ann", str(files["ann"]), "--images", str(files["images"]),
                 "--pred", str(files["pred"]), "--out", str(tmp_path / "out")]) == 0
    after = {p for p in (ROOT / "resources").rglob("*") if "__pycache__" not in p.parts}
    assert after == before, sorted(map(str, after - before))
