"""`masklens install-desktop` and `masklens completion bash` as the desktop and the shell read
them: an ``Exec`` line that the Desktop Entry Specification's rules parse back into this
installation's command (paths with spaces, quotes, ``$``, ``%``, backslashes), a refusal when
the ``[gui]`` extra is missing, ``--model`` completing the backend names, and a completion
function that returns when called outside a completion (``compgen -F``).

``desktop-file-validate`` is not installed here; :func:`spec_exec_argv` follows the spec's
"The Exec key" and "Possible value types" sections instead (and the test runs the real
validator too when it is on PATH)."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from masklens.core.cli import main
from masklens.core.models.registry import backend_names
from masklens.core.runtime import desktop

ROOT = Path(__file__).resolve().parents[2]
RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def _unescape_string(value: str) -> str:
    """A desktop-entry string value: ``\\s``, ``\\n``, ``\\t``, ``\\r``, ``\\\\``."""
    out, i = [], 0
    table = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    while i < len(value):
        if value[i] == "\\":
            assert value[i + 1] in table, f"unknown string escape in {value!r}"
            out.append(table[value[i + 1]])
            i += 2
        else:
            out.append(value[i])
            i += 1
    return "".join(out)


def spec_exec_argv(exec_value: str) -> list[str]:
    """The argument vector of an ``Exec`` value by the spec: string escapes first; arguments
    split on spaces; a reserved character only inside double quotes, where ``"``, `` ` ``,
    ``$`` and ``\\`` must be backslash-escaped; ``%%`` is a literal ``%`` (and no other field
    code may appear)."""
    line = _unescape_string(exec_value)
    argv, i = [], 0
    while i < len(line):
        if line[i] == " ":
            i += 1
            continue
        arg = []
        if line[i] == '"':
            i += 1
            while line[i] != '"':
                if line[i] == "\\":
                    assert line[i + 1] in '"`$\\', f"a backslash must escape \" ` $ \\ in {line!r}"
                    i += 1
                else:
                    assert line[i] not in '"`$', f"unescaped {line[i]!r} inside quotes in {line!r}"
                arg.append(line[i])
                i += 1
            i += 1
            assert i == len(line) or line[i] == " ", "a quoted argument ends at a space"
        else:
            while i < len(line) and line[i] != " ":
                assert line[i] not in RESERVED, f"reserved {line[i]!r} outside quotes in {line!r}"
                arg.append(line[i])
                i += 1
        text = "".join(arg)
        if text == "%f" and i >= len(line):  # the one field code: the file opened, last
            break
        assert "%" not in text.replace("%%", ""), f"a field code in {text!r}"
        argv.append(text.replace("%%", "%"))
    return argv


@pytest.mark.parametrize("folder", ["my venv", "it's $HOME", 'a "q" `b` 100%', "back\\slash (x); y&z"])
def test_exec_parses_back_into_the_installation_s_command(folder, tmp_path, monkeypatch):
    bin_dir = tmp_path / folder / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "masklens").write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    ini = configparser.ConfigParser(interpolation=None)
    ini.optionxform = str
    ini.read_string(desktop.desktop_entry())
    assert spec_exec_argv(ini["Desktop Entry"]["Exec"]) == [str(bin_dir / "masklens"), "gui"]


def test_a_plain_path_stays_unquoted():
    assert desktop.exec_value(["/opt/venv/bin/masklens", "gui"]) == "/opt/venv/bin/masklens gui"


def test_the_installed_entry_validates(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share with space"))
    assert main(["install-desktop"]) == 0
    entry = tmp_path / "share with space" / "applications" / "masklens.desktop"
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(entry)
    exe, command = spec_exec_argv(ini["Desktop Entry"]["Exec"])
    assert command == "gui" and Path(exe).is_file()
    if shutil.which("desktop-file-validate"):
        assert subprocess.run(["desktop-file-validate", str(entry)]).returncode == 0


@pytest.mark.parametrize("module", ["PySide6", "superqt"])
def test_install_desktop_without_the_gui_extra_is_refused(module, tmp_path):
    blocker = ROOT / "tests" / "extras"
    code = (f"import sys; sys.path.insert(0, {str(blocker)!r}); import blocked_imports; "
            f"blocked_imports.block([{module!r}]); from masklens.core.cli import main; "
            "sys.exit(main(['install-desktop']))")
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "share"),
           "MASKLENS_LOG_DIR": str(tmp_path / "log")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'masklens[gui]'" in lines[0] and module in lines[0]
    assert not (tmp_path / "share").exists()


def _bash_script(tmp_path: Path, capsys) -> Path:
    assert main(["completion", "bash"]) == 0
    script = tmp_path / "masklens.bash"
    script.write_text(capsys.readouterr().out)
    return script


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_model_completes_the_backend_names(tmp_path, capsys):
    script = _bash_script(tmp_path, capsys)
    for words, expected in ((["predict", "cafe", "--model", ""], set(backend_names())),
                            (["predict", "cafe", "--model", "gr"], {"grounded-sam2"}),
                            (["evaluate", "cafe", "--model", "d"], {"demo"})):
        line = " ".join(["masklens", *words])
        probe = (f"source {script}; COMP_WORDS=(masklens {' '.join(repr(w) for w in words)}); "
                 f"COMP_CWORD={len(words)}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; "
                 "_shtab_masklens; printf '%s\\n' \"${COMPREPLY[@]}\"")
        out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert set(out.stdout.split()) == expected, (words, out.stdout)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_compgen_f_on_the_completion_function_returns(tmp_path, capsys):
    script = _bash_script(tmp_path, capsys)
    out = subprocess.run(["bash", "-c", f"source {script}; compgen -F _shtab_masklens masklens; echo done"],
                         capture_output=True, text=True, timeout=30)
    assert out.stdout.strip().endswith("done")
