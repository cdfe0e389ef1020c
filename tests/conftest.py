"""Shared test set-up: headless Qt, no network, no model downloads, and nothing written outside
the session's own scratch folder.

Every masklens setting's environment variable (core/runtime/config.py) inherited from the shell
is dropped; the folders (cache, config, data, log) and the XDG base folders point into one
scratch folder per session, removed when the session ends. The session fails if a file appeared
under the checkout's ``resources/``. Variables that steer the tests themselves
(``MASKLENS_OFFICIAL``, ``MASKLENS_GOLDEN_DIR``, ``MASKLENS_FUZZ_*``, ``MASKLENS_BENCH_*``,
``MASKLENS_BUNDLE``) are not settings and stay.
"""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from masklens.core.runtime import config

ROOT = Path(__file__).resolve().parents[1]

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if os.environ["QT_QPA_PLATFORM"] == "offscreen":
    # the offscreen plugin's own screen is 800×800: the windows under test get a desktop's
    # 1920×1080 (restored geometry is cut to the screen, and 1440–1910 px layouts are checked)
    _screen = Path(tempfile.gettempdir()) / f"masklens-offscreen-1920x1080-{os.getuid()}.json"
    _screen.write_text('{"screens": [{"name": "desktop", "x": 0, "y": 0, "width": 1920, "height": 1080, '
                       '"logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}')
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={_screen}"
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# weights already on this machine are still found (read only, offline) once XDG_CACHE_HOME moves
os.environ.setdefault("HF_HOME", os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                              os.path.expanduser("~/.cache"), "huggingface"))

_SCRATCH = tempfile.mkdtemp(prefix="masklens-tests-")
for _setting in config.SETTINGS:
    os.environ.pop(_setting.env, None)
#: the folders masklens writes to, and the XDG base folders (Qt, platformdirs, matplotlib); the
#: review stores' data folder follows XDG_DATA_HOME, which a test may move for itself
SCRATCH_PATHS = {
    "MASKLENS_CACHE_DIR": "cache",
    "MASKLENS_CONFIG_DIR": "config",
    "MASKLENS_LOG_DIR": "logs",
    "XDG_CONFIG_HOME": "xdg-config",
    "XDG_DATA_HOME": "data",
    "XDG_CACHE_HOME": "xdg-cache",
    "XDG_STATE_HOME": "xdg-state",
}
for _var, _sub in SCRATCH_PATHS.items():
    os.environ[_var] = os.path.join(_SCRATCH, _sub)
_OWNER = os.getpid()


def _remove_scratch() -> None:
    """The scratch dir goes when the session's process exits (after every test and every
    subprocess a test started, which read the paths above, has finished); never from a forked
    child, which would pull it from under the session."""
    if os.getpid() == _OWNER:
        shutil.rmtree(_SCRATCH, ignore_errors=True)


atexit.register(_remove_scratch)


def checkout_files() -> set[Path]:
    """Every file under the checkout's ``resources/`` (which the tests read demo data from)."""
    return {p for p in (ROOT / "resources").rglob("*") if p.is_file() and "__pycache__" not in p.parts}


_BEFORE: set[Path] = set()


def pytest_sessionstart(session: pytest.Session) -> None:
    import signal

    import masklens.core

    # Ctrl+C as a user has it, whatever started the suite: a command run in the background by a
    # non-interactive shell (`make test &`) starts with SIGINT ignored, which every process the
    # tests start would inherit, and the tests of Ctrl+C would see nothing arrive
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)

    where = Path(masklens.core.__file__).resolve().parent
    if where != ROOT / "core":  # the demo files the tests read would not count as bundled
        raise pytest.UsageError(f"masklens is imported from {where}, not from this checkout "
                                f"({ROOT}): run `pip install -e .` here first")
    _BEFORE.update(checkout_files())


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.getpid() != _OWNER or not _BEFORE:
        return
    new = sorted(str(p.relative_to(ROOT)) for p in checkout_files() - _BEFORE)
    if new:
        session.config.get_terminal_writer().line(
            "the tests wrote into the checkout: " + ", ".join(new), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
