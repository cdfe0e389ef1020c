"""Model backends by name: masklens' own and any installed package's, through the entry-point
group ``masklens.models`` (:mod:`masklens.core.plugins`), each a module defining
``INFO: BackendInfo`` and ``create(**options) -> Segmenter``."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from masklens.core import plugins
from masklens.core.errors import ModelError
from masklens.core.models.base import BackendInfo, Segmenter
from masklens.core.plugins import Plugins

Backend = tuple[BackendInfo, Callable[..., Segmenter]]


def _backend(name: str, obj: object) -> Backend:
    """A backend module's (INFO, create), or a (info, factory) pair added at run time."""
    if isinstance(obj, ModuleType):
        info, create = getattr(obj, "INFO", None), getattr(obj, "create", None)
        if not isinstance(info, BackendInfo) or not callable(create):
            raise TypeError(f"model plug-in '{name}' ({obj.__name__}) needs INFO: BackendInfo and create()")
        return info, create
    if (isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], BackendInfo)
            and callable(obj[1])):
        return obj[0], obj[1]
    raise TypeError(f"model plug-in '{name}' is neither a backend module nor (info, factory)")


#: every backend: entry points of ``masklens.models`` and those added at run time
BACKENDS: Plugins[Backend] = Plugins(plugins.MODELS, "model", _backend)


def register_backend(info: BackendInfo, factory: Callable[..., Segmenter]) -> None:
    """Add a backend in this process under ``info.name`` (a notebook, a test); an installed
    package declares an entry point in ``masklens.models`` instead."""
    BACKENDS.add(info.name, (info, factory))


def backend_names() -> list[str]:
    return BACKENDS.names()


def backend_module(name: str) -> str | None:
    """The module an installed backend is defined in (``None`` for one added at run time)."""
    return BACKENDS.module(name)


def _resolve(name: str) -> Backend:
    try:
        return BACKENDS.get(name)
    except KeyError:
        raise ModelError(
            f"unknown model '{name}'",
            hint=f"known models: {', '.join(backend_names())} (see `masklens models`)",
        ) from None


def made_by_name(name: str) -> bool:
    """Whether ``name`` is an installed backend, not replaced in this process (another process,
    the window's model process, can then make it from its name alone)."""
    return BACKENDS.is_installed(name)


def backend_info(name: str) -> BackendInfo:
    return _resolve(name)[0]


def create_segmenter(name: str, **options: Any) -> Segmenter:
    """Instantiate backend ``name`` (weights load lazily on first use); a backend whose extra is
    not installed raises a ModelError naming it."""
    require_extra(name)
    make = _resolve(name)[1]
    try:
        return make(**options)
    except (TypeError, ValueError) as exc:  # an option of the user's the backend cannot take
        from masklens.core.errors import ModelError

        given = ", ".join(f"{k}={v!r:.60}" for k, v in options.items() if v is not None)
        raise ModelError(f"model '{name}' cannot take these options ({given}): {exc}",
                         hint="see `masklens models` for each backend's options") from None


def require_extra(name: str) -> BackendInfo:
    """The backend's info; a ModelError naming the pip extra when its libraries are missing
    (and for an unknown name)."""
    info = _resolve(name)[0]
    if info.extra:
        from masklens.core.runtime.extras import check, extra_modules

        check(f"model '{name}'", extra_modules()[info.extra], model=True, extra=info.extra)
    return info
