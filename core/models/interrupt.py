"""Interruptible forward passes: the caller's cancel check runs before every submodule's forward.

A forward pass of a real-size model on a CPU is one call that lasts seconds to minutes, so a
cancel flag looked at between calls takes that long to act. :func:`make_interruptible` adds one
forward pre-hook to every submodule of a torch model (tens of microseconds apart even at real
size); the hook calls the check that the running thread installed with :func:`cancel_check` —
typically a job's ``check()``, which raises :class:`~masklens.core.errors.Cancelled`. The
exception unwinds out of the forward pass like any other: the encoding cache and the prediction
cache store only values that were returned, so nothing half-computed is kept, and the model is
untouched for the next call (it has no state that a half-run forward could leave behind).
One attention core can itself last a second at real size; :mod:`masklens.core.models.
attention_split` (installed here) checks between groups of its heads, and :mod:`masklens.core.
models.linear_split` between row blocks of a long linear layer.

The check is per thread: a pass run by another thread (or with no check installed) pays one
thread-local lookup per submodule and is never interrupted. Nothing here imports torch at module
import time.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

_local = threading.local()
#: attribute set on a model whose submodules carry the hook (so it is added once)
_MARK = "_masklens_interruptible"


def current_check() -> Callable[[], None] | None:
    """The cancel check installed by this thread (None: not interruptible)."""
    return getattr(_local, "check", None)


@contextlib.contextmanager
def cancel_check(check: Callable[[], None] | None) -> Iterator[None]:
    """Run ``check()`` before each submodule's forward of an interruptible model, in this thread,
    inside the ``with`` block (nested blocks restore the outer check)."""
    previous = current_check()
    _local.check = check
    try:
        yield
    finally:
        _local.check = previous


def _pre_hook(_module: Any, _args: Any) -> None:
    check = getattr(_local, "check", None)
    if check is not None:
        check()


def make_interruptible(model: Any) -> int:
    """Add the cancel pre-hook to every submodule of the torch module ``model`` (once; TorchScript
    modules, which take no hooks, are skipped); returns how many modules carry it. Anything that
    is not a torch module is left alone (returns 0)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None or not isinstance(model, torch.nn.Module):
        return 0
    from masklens.core.models import attention_split, deformable_split, linear_split

    attention_split.install()  # cancel between head groups inside a long attention core
    script = torch.jit.ScriptModule
    count = 0
    for module in model.modules():
        if isinstance(module, script):  # TorchScript takes no hooks (Meta SAM 2's transforms)
            continue
        if not getattr(module, _MARK, False):
            module.register_forward_pre_hook(_pre_hook)
            linear_split.make_splittable(module)  # and between row blocks of a long linear layer
            deformable_split.make_splittable(module)  # and query blocks of deformable attention
            object.__setattr__(module, _MARK, True)
        count += 1
    return count


def torch_modules(owner: Any, max_depth: int = 2) -> list[Any]:
    """The torch modules among ``owner``'s attributes (and theirs, ``max_depth`` levels down: a
    Meta SAM 2 predictor holds its model), each once; top-level modules only, not their children."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        return []
    found: list[Any] = []
    seen: set[int] = set()

    def walk(obj: Any, depth: int) -> None:
        if id(obj) in seen or depth > max_depth:
            return
        seen.add(id(obj))
        if isinstance(obj, torch.nn.Module):
            found.append(obj)
            return
        attrs = getattr(obj, "__dict__", None)
        if not attrs or isinstance(obj, type):
            return
        for value in list(attrs.values()):
            if isinstance(value, (str, bytes, int, float, bool)) or value is None:
                continue
            walk(value, depth + 1)

    walk(owner, 0)
    return found
