"""Ctrl+C in the first moments of a command (Python importing masklens, the parser being built,
the log being opened) is "masklens: interrupted" and exit 130, never a KeyboardInterrupt
traceback. Real signals delivered to a real `masklens` process: started by Python's own console
script (from masklens' first line on), and by the launcher (packaging/launcher.c, `make setup`'s
`masklens` and the bundle's: from its first instruction on)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from process_signals import sigint_taken_over

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


#: where masklens' own code lives
_OURS = Path(cli.__file__).resolve().parents[1]


def _before_the_handler(traceback: str) -> bool:
    """Every masklens frame of ``traceback`` is code that runs before masklens' handler is in
    place: masklens.core's ``__init__`` and masklens.core.cli's lines up to the handler's
    installation (a Ctrl+C there is still Python's)."""
    source = Path(cli.__file__).read_text(encoding="utf-8").splitlines()
    installed_at = source.index("_install_early_handler()") + 1
    for path, line in re.findall(r'File "([^"]+)", line (\d+)', traceback):
        frame = Path(path).resolve()
        if not frame.is_relative_to(_OURS) or frame == _OURS / "__init__.py":
            continue
        if frame != Path(cli.__file__).resolve() or int(line) > installed_at:
            return False
    return True
ROOT = Path(__file__).resolve().parents[2]
INTERRUPTED = "masklens: interrupted; finished work is kept, re-run to continue"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A ``masklens`` installed as ``make setup`` installs it: FOLDER/bin/masklens the launcher
    (packaging/launcher.c, built by packaging/launcher.py) of FOLDER/libexec/masklens, a
    console script as pip writes it for this Python; FOLDER."""
    if shutil.which((os.environ.get("CC") or "cc").split()[0]) is None:
        pytest.skip("no C compiler (cc) to build the launcher with")
    folder = tmp_path_factory.mktemp("installed")
    script = folder / "libexec" / "masklens"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom masklens.core.cli import main\n"
                      "if __name__ == '__main__':\n    sys.exit(main())\n", encoding="utf-8")
    script.chmod(0o755)
    (folder / "bin").mkdir()
    build = subprocess.run([sys.executable, str(ROOT / "packaging" / "launcher.py"), "build",
                            str(folder / "bin" / "masklens"), "../libexec/masklens"],
                           capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stderr
    return folder


def _ctrl_c_every_millisecond(argv: list[str], *, after_first_instruction: bool = False) -> dict[str, int]:
    """SIGINT to ``argv`` at every millisecond of its first 60, twice over; the outcomes counted.
    ``after_first_instruction``: the milliseconds count from the program's first instruction
    (SIGINT blocked or caught), not from the return of fork and exec."""
    import time

    seen: dict[str, int] = {}
    for _ in range(2):
        for ms in range(0, 60):
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            while after_first_instruction and p.poll() is None and not sigint_taken_over(p.pid):
                pass
            time.sleep(ms / 1000)
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=120)
            if p.returncode == 130:
                assert err.strip() == INTERRUPTED, err
                kind = "interrupted"
            elif p.returncode == 0:
                kind = "finished"
            elif p.returncode == -signal.SIGINT and not err:
                kind = "before Python's own handler"
            else:  # Python's own: a traceback of its start-up frames, or (interrupted while it
                # sets its traceback printing up) the bare exception line
                assert "KeyboardInterrupt" in err and ("Traceback" in err or err.strip() == "KeyboardInterrupt"), (
                    ms, p.returncode, err)
                assert _before_the_handler(err), f"a traceback through masklens' code at {ms} ms:\n{err}"
                kind = "interpreter start-up"
            seen[kind] = seen.get(kind, 0) + 1
    return seen


@pytest.mark.slow
def test_ctrl_c_in_the_first_milliseconds_of_pythons_console_script(installed):
    """SIGINT to `masklens score` started by Python's own console script (a plain `pip install`)
    at every millisecond of its first 60: once Python runs masklens' first line, every run ends
    as "masklens: interrupted", exit 130 — never a traceback through masklens' own code. Before
    that line the interpreter is still starting (its own start-up and the standard library's
    ``site``): what Python does then is not the program's (killed by SIGINT, which the shell
    reports as 130, a traceback of site's frames alone, or — interrupted while Python sets up its
    traceback printing — the bare line "KeyboardInterrupt")."""
    seen = _ctrl_c_every_millisecond([str(installed / "libexec" / "masklens"), "score", "cafe",
                                      *demo_argv("cafe")])
    assert seen.get("interrupted", 0) >= 20, seen  # from masklens' first line on: the one line


@pytest.mark.slow
def test_ctrl_c_at_any_moment_of_a_launched_masklens_process(installed):
    """The same with the launcher in front (`make setup`'s `masklens`, the bundle's): every run,
    from the launcher's first instruction on, ends as "masklens: interrupted", exit 130, or
    finishes — a Ctrl+C while the interpreter starts waits, blocked, for masklens' handler.
    Never a traceback, never a process killed by the signal."""
    seen = _ctrl_c_every_millisecond([str(installed / "bin" / "masklens"), "score", "cafe",
                                      *demo_argv("cafe")], after_first_instruction=True)
    assert set(seen) <= {"interrupted", "finished"}, seen
    assert seen.get("interrupted", 0) >= 20, seen  # SIGINT is unblocked: Ctrl+C stops the work


def _ctrl_c_pending() -> None:
    """In the child before exec: a Ctrl+C that came before the program's first instruction,
    blocked and pending (as the launcher keeps one that comes while the interpreter starts).
    SIGINT's action is the default, as a terminal's shell starts a program with."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    os.kill(os.getpid(), signal.SIGINT)


@pytest.mark.parametrize("program", ["bin/masklens", "a link named ml to bin/masklens", "libexec/masklens"])
def test_a_ctrl_c_pending_when_masklens_starts_is_interrupted(installed, tmp_path, program):
    """The launcher, also started through a link of another name, and the console script with
    SIGINT blocked by whoever started it: the pending Ctrl+C reaches masklens' handler once it
    is in place (not lost, not a traceback, not the work done as if no Ctrl+C came)."""
    path = installed / program.rsplit(" ", 1)[-1]
    if program.startswith("a link"):
        (tmp_path / "ml").symlink_to(path)
        path = tmp_path / "ml"
    r = subprocess.run([str(path), "--version"], preexec_fn=_ctrl_c_pending, capture_output=True,
                       text=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr.strip()) == (130, "", INTERRUPTED)


def test_the_launcher_passes_arguments_and_exit_status(installed, tmp_path):
    launcher = str(installed / "bin" / "masklens")
    r = subprocess.run([launcher, "--version"], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout.strip()) == (0, f"masklens {cli.__version__}"), r.stderr
    missing = tmp_path / "no such dir é" / "ann.json"
    r = subprocess.run([launcher, "score", "cafe", "--ann", str(missing), "--pred", str(missing)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and str(missing) in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_library_user_keeps_its_blocked_sigint():
    """Only the masklens program unblocks SIGINT: a library user's process that blocked it
    keeps it blocked."""
    r = _run("import signal\n"
             "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n"
             "import masklens.core.cli\n"
             "print(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []))\n")
    assert (r.returncode, r.stdout.strip()) == (0, "True"), r.stderr
