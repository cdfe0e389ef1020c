"""Ctrl+C in the first moments of a command (Python importing masklens, the parser being built,
the log being opened) is "masklens: interrupted" and exit 130, never a KeyboardInterrupt
traceback. Real signals delivered to a real `masklens` process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import masklens.core.cli as cli
from masklens.core.cli import main
from masklens.core.kinds.demo import demo_argv


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ})


def test_a_sigint_right_after_the_import_is_interrupted_not_a_traceback():
    r = _run("import sys; sys.argv[0] = '/usr/bin/masklens'\n"
             "import os, signal, time\n"
             "import masklens.core.cli\n"
             "os.kill(os.getpid(), signal.SIGINT)\n"
             "time.sleep(30)\n")
    assert r.returncode == 130, r.stderr
    assert "Traceback" not in r.stderr and "KeyboardInterrupt" not in r.stderr
    assert r.stderr.strip() == "masklens: interrupted; finished work is kept, re-run to continue"


def test_a_library_user_keeps_pythons_own_ctrl_c():
    r = _run("import os, signal, time\n"
             "import masklens.core.cli\n"
             "try:\n"
             "    os.kill(os.getpid(), signal.SIGINT); time.sleep(30)\n"
             "except KeyboardInterrupt:\n"
             "    print('mine')\n")
    assert r.returncode == 0 and r.stdout.strip() == "mine", r.stderr


def test_ctrl_c_while_main_builds_the_parser_is_interrupted(monkeypatch, capsys):
    def interrupted(argv=None):
        os.kill(os.getpid(), signal.SIGINT)  # a real signal: Python raises KeyboardInterrupt here
        raise AssertionError("not reached")

    monkeypatch.setattr(cli, "build_parser", interrupted)
    try:
        rc = main(["score", "cafe"])
    except KeyboardInterrupt:
        pytest.fail("KeyboardInterrupt escaped main()")
    assert rc == 130
    err = capsys.readouterr().err
    assert err.strip() == "masklens: interrupted; finished work is kept, re-run to continue"


def test_ctrl_c_that_a_library_turns_into_another_error_is_interrupted(monkeypatch, capsys):
    """SIGINT during plotting surfaced as "internal error: ValueError: Invalid bounding box"
    (matplotlib catches the KeyboardInterrupt in its layout and fails on what is left)."""
    import masklens.core.cli.score as score

    def plotting(args):
        with contextlib.suppress(KeyboardInterrupt):  # what the library does with it
            os.kill(os.getpid(), signal.SIGINT)
        raise ValueError("Invalid bounding box")

    monkeypatch.setattr(score, "run", plotting)
    try:
        rc = main(["score", "cafe", "--ann", "a.json", "--pred", "p.json"])
    except ValueError:
        pytest.fail("reported as an internal error")
    assert rc == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "internal error" not in err


def test_a_sigint_after_the_work_is_done_keeps_the_exit_status():
    """Ctrl+C as the command finishes (the fuzzer's SIGINT class found rc -2 after 'wrote …')."""
    r = _run("import sys; sys.argv[0] = '/usr/bin/masklens'\n"
             "import os, signal\n"
             "from masklens.core.cli import main\n"
             "rc = main(['models'])\n"
             "os.kill(os.getpid(), signal.SIGINT)\n"
             "sys.exit(rc)\n")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr


def _masklens_program() -> list[str]:
    exe = Path(sys.executable).with_name("masklens")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "masklens"]


#: where masklens' own code lives: a traceback frame here means Ctrl+C was not masklens' yet
_OURS = str(Path(cli.__file__).resolve().parents[1])


@pytest.mark.slow
def test_ctrl_c_in_the_first_milliseconds_of_a_real_masklens_process():
    """SIGINT to a real `masklens score` at every millisecond of its first 60: once Python runs
    masklens' first line, every run ends as "masklens: interrupted", exit 130 — never a
    traceback through masklens' own code. Before that line the interpreter is still starting
    (its own start-up and the standard library's ``site``): what Python does then is not the
    program's (killed by SIGINT, which the shell reports as 130, or a traceback of site's
    frames alone)."""
    import time

    argv = [*_masklens_program(), "score", "cafe", *demo_argv("cafe")]
    seen: dict[str, int] = {}
    for _ in range(2):
        for ms in range(0, 60):
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(ms / 1000)
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=120)
            if p.returncode == 130:
                assert err.strip() == "masklens: interrupted; finished work is kept, re-run to continue", err
                kind = "interrupted"
            elif p.returncode == 0:
                kind = "finished"
            elif p.returncode == -signal.SIGINT and not err:
                kind = "before Python's own handler"
            else:
                assert "Traceback" in err and "KeyboardInterrupt" in err, (ms, p.returncode, err)
                assert _OURS not in err, f"a traceback through masklens' code at {ms} ms:\n{err}"
                kind = "interpreter start-up"
            seen[kind] = seen.get(kind, 0) + 1
    assert seen.get("interrupted", 0) >= 20, seen  # from masklens' first line on: the one line
