"""Settings (core/runtime/config.py): the environment wins over config.toml, which wins over the
default; `masklens config` shows each value's source; a bad file or value is one line; every
MASKLENS_* name in the product is a setting, and docs/configuration.md lists them all."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from masklens.core.cli import main
from masklens.core.files import limits
from masklens.core.runtime import config
from masklens.core.runtime.config import SETTINGS, ConfigError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """An empty config folder of this test's own, with no MASKLENS_* setting in the environment."""
    for s in SETTINGS:
        monkeypatch.delenv(s.env, raising=False)
    monkeypatch.setenv("MASKLENS_CONFIG_DIR", str(tmp_path / "conf"))
    monkeypatch.setenv("MASKLENS_LOG_DIR", str(tmp_path / "logs"))
    (tmp_path / "conf").mkdir()
    return tmp_path / "conf"


def _write(folder: Path, text: str) -> Path:
    path = folder / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_environment_wins_over_the_file_which_wins_over_the_default(folder, monkeypatch):
    assert config.get("max_json_depth") == 64
    path = _write(folder, "max_json_depth = 10\ncache_mode = 'files'\n")
    found = config.values("max_json_depth", "cache_mode", "max_mask_side")
    assert (found["max_json_depth"].value, found["max_json_depth"].source) == (10, "file")
    assert found["max_json_depth"].origin == str(path)
    assert found["cache_mode"].value == "files"
    assert (found["max_mask_side"].value, found["max_mask_side"].source) == (1 << 15, "default")
    monkeypatch.setenv("MASKLENS_MAX_JSON_DEPTH", "7")
    found = config.values("max_json_depth")["max_json_depth"]
    assert (found.value, found.source, found.origin) == (7, "environment", "MASKLENS_MAX_JSON_DEPTH")
    assert limits.current().max_json_depth == 7  # the readers see the same, read now
    monkeypatch.delenv("MASKLENS_MAX_JSON_DEPTH")
    assert limits.current().max_json_depth == 10


def test_a_changed_file_is_read_again(folder):
    _write(folder, "max_json_depth = 10\n")
    assert config.get("max_json_depth") == 10
    _write(folder, "max_json_depth = 12  # a longer line: another size\n")
    assert config.get("max_json_depth") == 12


def test_the_typed_settings_object_has_every_setting(folder, monkeypatch):
    assert [f.name for f in fields(config.Settings) if f.name != "sources"] == [s.name for s in SETTINGS]
    monkeypatch.setenv("MASKLENS_CACHE_DIR", str(folder / "cache"))
    now = config.current()
    assert now.cache_dir == folder / "cache" and now.sources["cache_dir"].source == "environment"
    assert now.config_dir == folder and isinstance(now.polygon_margin, float)


def test_masklens_config_lists_each_setting_with_its_source(folder, monkeypatch, capsys):
    path = _write(folder, "max_image_bytes = 1000\n")
    monkeypatch.setenv("MASKLENS_MODEL_PROCESS", "in-process")
    assert main(["config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"config file: {path}"
    rows = {line.split()[0]: line.split(None, 2)[1:] for line in lines[1:]}
    assert set(rows) == {s.name for s in SETTINGS}
    assert rows["max_image_bytes"] == ["1000", f"file {path}"]
    assert rows["model_process"] == ["in-process", "environment MASKLENS_MODEL_PROCESS"]
    assert rows["max_json_depth"] == ["64", "default"]
    assert rows["config_dir"] == [str(folder), "environment MASKLENS_CONFIG_DIR"]

    assert main(["config", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["file"] == str(path) and data["file_exists"] is True
    by_name = {s["name"]: s for s in data["settings"]}
    assert by_name["max_image_bytes"]["value"] == 1000 and by_name["max_image_bytes"]["origin"] == str(path)
    assert by_name["model_process"]["source"] == "environment"
    assert by_name["cache_mode"] == {**by_name["cache_mode"], "value": "auto", "source": "default"}
    assert sorted(folder.iterdir()) == [path] and path.read_text() == "max_image_bytes = 1000\n"  # only reads


@pytest.mark.parametrize("text, words", [
    ("max_json_depth = [", "not valid TOML"),
    ("max_json_dept = 3", "key 'max_json_dept': unknown setting"),
    ("max_json_depth = 'deep'", "key 'max_json_depth': expected a number"),
    ("max_json_depth = 2.5", "key 'max_json_depth': expected a whole number"),
    ("max_json_depth = 0", "key 'max_json_depth': 0 must be positive"),
    ("max_json_depth = true", "key 'max_json_depth': expected a number"),
    ("cache_mode = 'sometimes'", "key 'cache_mode': must be auto, wal or files"),
    ("cache_dir = 3", "key 'cache_dir': expected a string"),
    ("config_dir = '/elsewhere'", "key 'config_dir': only the environment variable sets it"),
])
def test_a_bad_config_file_is_one_line_naming_the_file_and_key(folder, capsys, text, words):
    path = _write(folder, text + "\n")
    with pytest.raises(ConfigError, match=re.escape(words)):
        config.values()
    for argv in (["config"], ["models"]):  # any command: one line, exit 2, no traceback
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"masklens: error: {path}: ") and words in err


@pytest.mark.parametrize("var, raw, words", [
    ("MASKLENS_MAX_MASK_SIDE", "big", "'big' is not a number"),
    ("MASKLENS_POLYGON_MARGIN", "-1", "must be positive"),
    ("MASKLENS_CACHE_MODE", "sometimes", "must be auto, wal or files"),
    ("MASKLENS_MODEL_PROCESS", "elsewhere", "must be separate or in-process"),
])
def test_a_bad_environment_value_is_one_line_naming_the_variable(folder, monkeypatch, capsys, var, raw, words):
    monkeypatch.setenv(var, raw)
    assert main(["config"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"masklens: error: {var}: ") and words in err


def test_environment_values_keep_their_forms(folder, monkeypatch):
    monkeypatch.setenv("MASKLENS_MAX_JSON_BYTES", "1e6")
    monkeypatch.setenv("MASKLENS_MODEL_PROCESS", "OFF")
    monkeypatch.setenv("MASKLENS_CACHE_MODE", " WAL ")
    monkeypatch.setenv("MASKLENS_DATA_DIR", "~/reviews-here")
    monkeypatch.setenv("MASKLENS_LOG_DIR", "")  # empty: not set
    got = config.current()
    assert got.max_json_bytes == 1_000_000 and got.model_process == "in-process" and got.cache_mode == "wal"
    assert got.data_dir == Path("~/reviews-here").expanduser()
    assert got.sources["log_dir"].source == "default"


def test_every_masklens_variable_the_product_names_is_a_setting():
    known = {s.env for s in SETTINGS}
    named: dict[str, list[str]] = {}
    readers = ""
    for folder in ("core", "gui", "packaging", "tools"):
        for p in sorted((ROOT / folder).rglob("*.py")):
            text = p.read_text(encoding="utf-8")
            for name in re.findall(r"MASKLENS_[A-Z0-9_]+", text):
                named.setdefault(name, []).append(str(p.relative_to(ROOT)))
            if p.name != "config.py":
                readers += text
    unknown = {name: where for name, where in named.items() if name not in known}
    assert not unknown, unknown
    assert not [s.name for s in SETTINGS if s.name not in readers]  # each setting is read somewhere


def test_only_the_settings_module_reads_masklens_variables():
    readers = [f"{p.relative_to(ROOT)}: {line.strip()}" for folder in ("core", "gui")
               for p in sorted((ROOT / folder).rglob("*.py")) if p.name != "config.py"
               for line in p.read_text(encoding="utf-8").splitlines()
               if re.search(r"(environ|getenv).*(MASKLENS_|_ENV\b|MODE_VARIABLE)", line)]
    assert not readers, readers


def test_the_configuration_page_is_generated_from_the_settings():
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert page == config.markdown_page(), (
        "docs/configuration.md is out of date: write it again with\n"
        "python -c 'from masklens.core.runtime.config import markdown_page; "
        "print(markdown_page(), end=\"\")' > docs/configuration.md")
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert [row.split(" | ")[1] for row in rows] == [f"`{s.env}`" for s in SETTINGS]
    cells = [re.sub(r"`[^`]*`", "code", row).count("|") for row in rows]
    assert set(cells) == {6}, cells  # five cells a row: no bare '|' inside one


def test_the_pages_example_file_is_a_valid_config_file(folder):
    path = _write(folder, config.example_toml())
    found = config.values()
    for key, value, _ in config.EXAMPLE_FILE:
        assert found[key].source == "file" and found[key].origin == str(path)
        assert str(found[key].value) == str(value)
    assert config.example_toml() in config.markdown_page()


def test_the_models_python_is_the_one_chosen_else_the_setting_else_this_one(folder, monkeypatch, tmp_path):
    import sys

    from masklens.core.models.remote import ModelHost

    assert ModelHost().external_python is None  # nothing set: this process' own Python
    monkeypatch.setenv("MASKLENS_MODEL_PYTHON", sys.executable)
    assert ModelHost().external_python == Path(sys.executable)
    chosen = tmp_path / "venv" / "bin" / "python"
    assert ModelHost(chosen).external_python == chosen  # the window's choice wins over the setting
    assert config.is_program(Path(sys.executable)) and not config.is_program(chosen)
    assert not config.is_program(tmp_path)  # a folder is no program
