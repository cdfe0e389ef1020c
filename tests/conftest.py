"""Shared test set-up: headless Qt, no network, no model downloads, nothing written to the
user's own cache/config/data folders."""

import atexit
import os
import shutil
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

_SCRATCH = tempfile.mkdtemp(prefix="masklens-tests-")
os.environ.setdefault("MASKLENS_CACHE_DIR", os.path.join(_SCRATCH, "cache"))
os.environ.setdefault("MASKLENS_CONFIG_DIR", os.path.join(_SCRATCH, "config"))
os.environ.setdefault("XDG_DATA_HOME", os.path.join(_SCRATCH, "data"))
os.environ.setdefault("MASKLENS_LOG_DIR", os.path.join(_SCRATCH, "logs"))  # core/runtime/logs.py
_OWNER = os.getpid()


def _remove_scratch() -> None:
    """The scratch dir goes when the session's process exits (after every test and every
    subprocess a test started, which read the paths above, has finished); never from a forked
    child, which would pull it from under the session."""
    if os.getpid() == _OWNER:
        shutil.rmtree(_SCRATCH, ignore_errors=True)


atexit.register(_remove_scratch)
