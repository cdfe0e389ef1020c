"""Backends register by name; adding a model is one small module, not a factory branch."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from masklens.core.errors import ModelError
from masklens.core.models.base import BackendInfo, Segmenter

#: name -> module defining ``INFO: BackendInfo`` and ``create(**options) -> Segmenter``
_BACKEND_MODULES: dict[str, str] = {
    "demo": "masklens.core.models.demo",
    "replay": "masklens.core.models.replay",
    "sam3": "masklens.core.models.sam3",
    "grounded-sam2": "masklens.core.models.grounded_sam2",
    "owlv2-sam2": "masklens.core.models.owlv2_sam2",
    "clipseg": "masklens.core.models.clipseg",
}
_FACTORIES: dict[str, tuple[BackendInfo, Callable[..., Segmenter]]] = {}


def register_backend(info: BackendInfo, factory: Callable[..., Segmenter]) -> None:
    """Register a backend instance factory under ``info.name`` (plug-ins, tests)."""
    _FACTORIES[info.name] = (info, factory)


def backend_names() -> list[str]:
    return list(dict.fromkeys([*_BACKEND_MODULES, *_FACTORIES]))


def _resolve(name: str) -> tuple[BackendInfo, Callable[..., Segmenter]]:
    if name in _FACTORIES:
        return _FACTORIES[name]
    module = _BACKEND_MODULES.get(name)
    if module is None:
        raise ModelError(
            f"unknown model '{name}'",
            hint=f"known models: {', '.join(backend_names())} (see `masklens models`)",
        )
    mod = importlib.import_module(module)
    _FACTORIES[name] = (mod.INFO, mod.create)
    return _FACTORIES[name]


def is_builtin(name: str) -> bool:
    """Whether ``name`` is one of masklens' own backends, not replaced by a registered factory
    (a process of its own can make it from its name alone)."""
    module = _BACKEND_MODULES.get(name)
    if module is None:
        return False
    return _resolve(name)[1] is getattr(importlib.import_module(module), "create", None)


def backend_info(name: str) -> BackendInfo:
    return _resolve(name)[0]


def create_segmenter(name: str, **options: Any) -> Segmenter:
    """Instantiate backend ``name`` (weights load lazily on first use); a backend whose extra is
    not installed raises a ModelError naming it."""
    require_extra(name)
    return _resolve(name)[1](**options)


def require_extra(name: str) -> BackendInfo:
    """The backend's info; a ModelError naming the pip extra when its libraries are missing
    (and for an unknown name)."""
    info = _resolve(name)[0]
    if info.extra:
        from masklens.core.runtime.extras import EXTRA_MODULES, check

        check(f"model '{name}'", EXTRA_MODULES[info.extra], model=True)
    return info
