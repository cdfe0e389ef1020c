"""Desktop conventions of the command line: the rotating log file, shell completion (shtab),
`masklens install-desktop [--uninstall]` and `masklens cache info|clear`."""

from __future__ import annotations

import configparser
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import masklens.core as ml
from masklens.core.cli import main
from masklens.core.runtime import logs

ROOT = Path(__file__).resolve().parents[2]
D = ROOT / "resources" / "demo"


def _flush() -> None:
    for h in logging.getLogger("masklens").handlers:
        h.flush()


# ------------------------------------------------------------------ log file
def test_every_command_is_logged_in_the_user_log_dir(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(logs.LOG_DIR_ENV, str(tmp_path / "logs"))
    assert main(["cache", "--cache-dir", str(tmp_path / "c"), "info"]) == 0
    assert main(["score", "cafe", "--ann", str(tmp_path / "none.json"), "--pred", "x.json"]) == 2
    _flush()
    text = (tmp_path / "logs" / "masklens.log").read_text()
    assert f"INFO masklens: masklens {ml.__version__}: cache --cache-dir" in text
    assert "WARNING masklens: " in text and "none.json: JSON file not found" in text


def test_the_default_log_dir_is_platformdirs_user_log_dir(monkeypatch):
    import platformdirs

    monkeypatch.delenv(logs.LOG_DIR_ENV)
    assert logs.log_path() == Path(platformdirs.user_log_dir("masklens", appauthor=False)) / "masklens.log"


def test_an_internal_error_is_logged_with_its_traceback_and_the_path_printed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(logs.LOG_DIR_ENV, str(tmp_path / "logs"))

    def broken(args):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("masklens.core.cli.cache.run_info", broken)
    with pytest.raises(ZeroDivisionError):
        main(["cache", "info"])
    assert f"internal error; the log file is {tmp_path / 'logs' / 'masklens.log'}" in capsys.readouterr().err
    _flush()
    text = (tmp_path / "logs" / "masklens.log").read_text()
    assert "internal error in `masklens cache`" in text and "ZeroDivisionError: a bug" in text
    assert "Traceback (most recent call last)" in text


def test_the_log_rotates(tmp_path, monkeypatch):
    monkeypatch.setenv(logs.LOG_DIR_ENV, str(tmp_path / "logs"))
    assert logs.configure() == tmp_path / "logs" / "masklens.log"
    for _ in range(3):
        logs.logger.info("x" * (logs.MAX_BYTES // 2))
    _flush()
    assert (tmp_path / "logs" / "masklens.log.1").is_file()
    assert (tmp_path / "logs" / "masklens.log").stat().st_size <= logs.MAX_BYTES


def test_an_unwritable_log_dir_costs_only_the_log(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(logs.LOG_DIR_ENV, str(blocker / "logs"))
    assert logs.configure() is None
    assert main(["cache", "--cache-dir", str(tmp_path / "c"), "info"]) == 0
    # in a fresh process (no pytest log capture): a user error is one line, not echoed by logging
    code = ("import sys; from masklens.core.cli import main; "
            f"sys.exit(main(['score', 'cafe', '--ann', {str(tmp_path / 'none.json')!r}, '--pred', 'x']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, logs.LOG_DIR_ENV: str(blocker / "logs")})
    assert out.returncode == 2
    err = out.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].endswith("none.json: JSON file not found"), out.stderr


# ------------------------------------------------------------------ completion
COMMANDS_AND_KINDS = ("export", "install-desktop", "cache", "info", "cafe", "hallusegbench")


@pytest.mark.parametrize(("shell", "words"), [
    ("bash", (*COMMANDS_AND_KINDS, "--score-threshold", "--older-than", "fiftyone")),
    ("zsh", (*COMMANDS_AND_KINDS, "--score-threshold", "--older-than", "fiftyone")),
    ("tcsh", COMMANDS_AND_KINDS),  # shtab's tcsh script completes sub-commands and choices only
])
def test_completion_scripts_know_the_commands_kinds_and_flags(shell, words, capsys):
    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    for word in words:
        assert word in script, (shell, word)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_the_bash_script_parses_and_completes(tmp_path, capsys):
    assert main(["completion", "bash"]) == 0
    script = tmp_path / "masklens.bash"
    script.write_text(capsys.readouterr().out)
    # source it and ask for the completions of `masklens ca` as bash would
    probe = (f"source {script}; COMP_WORDS=(masklens ca); COMP_CWORD=1; COMP_LINE='masklens ca'; "
             "COMP_POINT=${#COMP_LINE}; _shtab_masklens; printf '%s\\n' \"${COMPREPLY[@]}\"")
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert set(out.stdout.split()) == {"cache"}
    # a path option completes file names, a folder option folder names
    (tmp_path / "ann.json").write_text("{}")
    (tmp_path / "annotations").mkdir()
    for words, expected in ((["score", "cafe", "--ann", "ann"], {"ann.json", "annotations"}),
                            (["score", "cafe", "--images", "ann"], {"annotations"})):
        line = " ".join(["masklens", *words])
        probe = (f"source {script}; COMP_WORDS=({line}); COMP_CWORD={len(words)}; COMP_LINE='{line}'; "
                 "COMP_POINT=${#COMP_LINE}; _shtab_masklens; printf '%s\\n' \"${COMPREPLY[@]}\"")
        out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60,
                             cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert set(out.stdout.split()) == expected, (words, out.stdout)


# ------------------------------------------------------------------ install-desktop
def test_install_desktop_into_xdg_data_home_and_uninstall(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    assert main(["install-desktop"]) == 0
    entry = tmp_path / "share" / "applications" / "masklens.desktop"
    svg = tmp_path / "share" / "icons" / "hicolor" / "scalable" / "apps" / "masklens.svg"
    png = tmp_path / "share" / "icons" / "hicolor" / "256x256" / "apps" / "masklens.png"
    assert svg.read_bytes() == (ROOT / "resources/desktop/masklens.svg").read_bytes()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(entry)
    e = ini["Desktop Entry"]
    assert (e["Type"], e["Name"], e["Icon"], e["Terminal"]) == ("Application", "masklens", "masklens", "false")
    exe, command, field = e["Exec"].rsplit(" ", 2)
    assert (command, field) == ("gui", "%f") and os.access(exe.strip("'"), os.X_OK)  # this installation's masklens
    assert e["MimeType"] == "application/x-masklens-workspace;"
    if shutil.which("desktop-file-validate"):
        assert subprocess.run(["desktop-file-validate", str(entry)]).returncode == 0
    assert main(["install-desktop", "--uninstall"]) == 0
    assert not entry.exists() and not svg.exists() and not png.exists()
    assert main(["install-desktop", "--uninstall"]) == 0
    assert "nothing (not installed)" in capsys.readouterr().err


def test_a_relative_xdg_data_home_is_ignored(tmp_path, monkeypatch):
    from masklens.core.runtime import desktop

    monkeypatch.setenv("XDG_DATA_HOME", "relative/share")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert desktop.data_home() == tmp_path / ".local" / "share"


def test_the_bundled_desktop_files_are_what_the_packaging_script_draws():
    sys.path.insert(0, str(ROOT / "packaging"))
    try:
        import make_desktop_files as m
    finally:
        sys.path.remove(str(ROOT / "packaging"))
    assert (ROOT / "resources/desktop/masklens.svg").read_text() == m.SVG
    assert (ROOT / "resources/desktop/masklens.desktop").read_text() == m.DESKTOP
    assert (ROOT / "resources/desktop/masklens-workspace.xml").read_text() == m.MIME
    assert (ROOT / "resources/desktop/io.github.masklens.masklens.metainfo.xml").read_text() == m.METAINFO
    from PIL import Image

    with Image.open(ROOT / "resources/desktop/masklens.png") as im:
        assert im.size == (256, 256) and im.mode == "RGBA"


# ------------------------------------------------------------------ cache info|clear
@pytest.fixture
def filled_cache(tmp_path):
    cache = tmp_path / "cache"
    ml.predict("cafe", "demo", ann=str(D / "cafe/ann.json"), images=str(D / "cafe/images"), cache_dir=cache)
    ml.predict("r2sm", "demo", ann=str(D / "r2sm/ann.json"), images=str(D / "r2sm/images"), cache_dir=cache)
    db = cache / "predictions.sqlite3"
    with sqlite3.connect(db) as conn:  # make the r2sm entries 30 days old
        conn.execute("UPDATE predictions SET created = ? WHERE prompt IN (SELECT prompt FROM "
                     "predictions WHERE prompt LIKE 'the %')", (time.time() - 30 * 86400,))
        old = conn.execute("SELECT COUNT(*) FROM predictions WHERE created < ?",
                           (time.time() - 86400,)).fetchone()[0]
        total = conn.execute("SELECT COUNT(*) FROM predictions").fetchone()[0]
    assert 0 < old < total
    return cache, old, total


def test_cache_info(filled_cache, capsys):
    cache, old, total = filled_cache
    assert main(["cache", "--cache-dir", str(cache), "info"]) == 0
    out = capsys.readouterr().out
    assert f"path:    {cache / 'predictions.sqlite3'}" in out
    assert f"entries: {total}" in out and "on disk" in out
    demo_line = next(line for line in out.splitlines() if line.strip().startswith("demo"))
    assert f"{total} entries" in demo_line


def test_cache_info_of_no_cache_creates_none(tmp_path, capsys):
    assert main(["cache", "--cache-dir", str(tmp_path / "never"), "info"]) == 0
    assert "entries: 0 (no cache yet)" in capsys.readouterr().out
    assert not (tmp_path / "never").exists()


def test_cache_clear_needs_yes_and_honours_its_filters(filled_cache, capsys):
    from masklens.core.cache.admin import cache_info

    cache, old, total = filled_cache
    assert main(["cache", "--cache-dir", str(cache), "clear"]) == 1
    assert f"would remove {total} cached predictions (all)" in capsys.readouterr().err
    assert cache_info(cache).entries == total
    assert main(["cache", "--cache-dir", str(cache), "clear", "--model", "sam3", "--yes"]) == 0
    assert cache_info(cache).entries == total
    assert main(["cache", "--cache-dir", str(cache), "clear", "--older-than", "7", "--yes"]) == 0
    assert f"removed {old} cached predictions older than 7 days" in capsys.readouterr().err
    assert cache_info(cache).entries == total - old
    before = cache_info(cache).size_bytes
    assert main(["cache", "--cache-dir", str(cache), "clear", "--model", "demo", "--yes"]) == 0
    info = cache_info(cache)
    assert info.entries == 0 and info.size_bytes < before  # compacted, not only emptied
    # the cleared cache still works: a new run fills it again
    ml.predict("cafe", "demo", ann=str(D / "cafe/ann.json"), images=str(D / "cafe/images"), cache_dir=cache)
    assert cache_info(cache).entries > 0
    assert main(["cache", "--cache-dir", str(cache), "clear", "--older-than", "-1", "--yes"]) == 2


def test_cache_info_of_a_damaged_file_is_one_clear_error(tmp_path, capsys):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "predictions.sqlite3").write_bytes(b"this is not a database" * 100)
    assert main(["cache", "--cache-dir", str(tmp_path / "c"), "info"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"masklens: error: {tmp_path / 'c' / 'predictions.sqlite3'}: cannot use the "
                          "prediction cache (file is not a database)")
