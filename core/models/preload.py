"""Import torch early, in a background thread, for a session that is going to run a torch model.

The first ``import torch`` of a process loads torch's C libraries, and that part holds the GIL
for 0.3–0.4 s (more under load) in whatever thread runs it: done by the window's first prompt
it froze the window for that long (docs/models.md, "Live models at real size"). Started while
the window is being built, it is paid during start-up instead. Only for a session whose chosen
model needs torch: importing it costs ~560 MB of resident memory, which a session that only
reviews with the demo model should not pay.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
import threading

log = logging.getLogger(__name__)


def needs_torch(backend: str) -> bool:
    """Whether backend ``backend`` runs on torch (its extra is installed or not)."""
    from masklens.core.errors import MasklensError
    from masklens.core.models.registry import backend_info
    from masklens.core.runtime.extras import extra_modules

    try:
        info = backend_info(backend)
    except MasklensError:  # unknown (e.g. a plug-in that is not installed any more)
        return False
    return info.extra is not None and (info.extra == "sam2" or "torch" in extra_modules().get(info.extra, ()))


def start_torch_import(backend: str) -> threading.Thread | None:
    """Start importing torch in a daemon thread when ``backend`` needs it, torch is installed and
    not imported yet; the thread (None when nothing was started). A failure is only logged: the
    first prompt imports torch again and reports it as usual."""
    if "torch" in sys.modules or not needs_torch(backend) or importlib.util.find_spec("torch") is None:
        return None

    def run() -> None:
        from masklens.core.models.torch_device import import_torch

        try:
            import_torch()
        except Exception as exc:  # noqa: BLE001 - reported by the first prompt, which imports again
            log.info("torch was not imported ahead of the first prompt: %s", exc)

    thread = threading.Thread(target=run, name="masklens-torch-import", daemon=True)
    thread.start()
    return thread
