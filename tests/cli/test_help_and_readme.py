"""What a user reads first: ``--help`` without raw reST/Markdown markup, README command lines that
the shell runs as written (no placeholder read as a pipe), and pip lines that install."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from masklens.core.cli import COMMANDS, main
from masklens.core.cli.help_text import plain
from masklens.core.scoring.contract import kind_names

ROOT = Path(__file__).resolve().parents[2]
KIND_COMMANDS = ("score", "predict", "evaluate", "merge", "report", "export")


def _help(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", [[], *([c] for c in COMMANDS),
                                  *([c, k] for c in KIND_COMMANDS for k in kind_names())],
                         ids=lambda a: " ".join(a) or "masklens")
def test_help_has_no_raw_markup(argv, capsys):
    text = _help(argv, capsys)
    assert "`" not in text and ":func:" not in text, text


def test_plain_keeps_the_words():
    assert plain("with ``--pred`` (see `masklens models`, :func:`~a.b`)") == \
        "with --pred (see 'masklens models', a.b)"


def _shell_lines(markdown: str) -> list[str]:
    blocks = re.findall(r"```(?:sh|bash|console)\n(.*?)```", markdown, flags=re.S)
    lines = []
    for block in blocks:
        for line in block.splitlines():
            line = line.split(" #", 1)[0].strip()  # a trailing comment
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def test_readme_command_lines_are_one_command_each():
    doc = "README.md"
    for line in _shell_lines((ROOT / doc).read_text()):
        if not line.startswith("masklens "):
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
        assert "|" not in tokens and "||" not in tokens, f"{doc}: the shell reads a pipe in: {line}"


def test_readme_pip_lines_install_from_a_checkout():
    pip = [line for line in _shell_lines((ROOT / "README.md").read_text()) if line.startswith("pip install")]
    assert pip
    for line in pip:
        target = shlex.split(line)[-1]
        assert target == "." or target.startswith(".["), f"masklens is not on the index: {line}"
