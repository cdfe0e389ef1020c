"""Optional dependencies ("extras"): which pip extra provides a library, and one-line messages
that say how to install it.

The core install (``pip install masklens``) is the scorer; ``[gui]`` adds the window,
``[models]`` the model backends, ``[sam2]`` Meta's original SAM 2 code, ``[ray]`` ray,
``[hub]`` huggingface_hub alone (``hf://`` paths; ``[models]`` includes it).
Nothing here imports any of them: presence is checked with ``importlib.util.find_spec``.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from masklens.core.errors import MasklensError, ModelError

#: top-level import name -> the extra that installs it
EXTRA_OF: dict[str, str] = {
    "PySide6": "gui",
    "shiboken6": "gui",
    "superqt": "gui",
    "torch": "models",
    "torchvision": "models",
    "transformers": "models",
    "safetensors": "models",
    "huggingface_hub": "models",
    "tokenizers": "models",
    "sam2": "sam2",
    "hydra": "sam2",
    "iopath": "sam2",
    "ray": "ray",
}

#: import names each extra must provide for its features to work
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "gui": ("PySide6", "superqt"),
    "models": ("torch", "torchvision", "transformers", "safetensors", "huggingface_hub"),
    "sam2": ("sam2", "hydra", "iopath"),
    "ray": ("ray",),
    "hub": ("huggingface_hub",),
}


class MissingExtraError(MasklensError):
    """A feature needs a library of an extra that is not installed (one line, no traceback)."""

    def __init__(self, feature: str, module: str, extra: str) -> None:
        self.feature, self.module, self.extra = feature, module, extra
        super().__init__(missing_message(feature, module, extra))


class MissingModelExtraError(MissingExtraError, ModelError):
    """A model backend needs a library of an extra that is not installed."""


def install_command(extra: str) -> str:
    """The pip command that installs ``extra``."""
    return f"pip install 'masklens[{extra}]'"


def missing_message(feature: str, module: str, extra: str) -> str:
    return f"{feature} needs {module}, which is not installed: {install_command(extra)}"


def extra_of(module: str | None) -> str | None:
    """The extra that installs ``module`` (a dotted name is looked up by its top level)."""
    return EXTRA_OF.get((module or "").split(".", 1)[0])


def is_installed(module: str) -> bool:
    """True when ``module`` can be imported (its spec is found; nothing is imported)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def first_missing(modules: tuple[str, ...] | list[str]) -> str | None:
    """The first of ``modules`` that is not installed, or None."""
    return next((m for m in modules if not is_installed(m)), None)


def missing_for(extra: str) -> str | None:
    """The first library of ``extra`` that is not installed, or None when the extra is complete."""
    return first_missing(EXTRA_MODULES[extra])


def check(feature: str, modules: tuple[str, ...] | list[str], *, model: bool = False) -> None:
    """Raise :class:`MissingExtraError` (``MissingModelExtraError`` for a model) when one of
    ``modules`` is not installed."""
    absent = first_missing(modules)
    if absent is not None:
        cls = MissingModelExtraError if model else MissingExtraError
        raise cls(feature, absent, extra_of(absent) or "all")


def require(module: str, feature: str, *, model: bool = False) -> ModuleType:
    """Import ``module``, or raise :class:`MissingExtraError` naming the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        error = from_import_error(exc, feature, model=model)
        if error is None:
            raise
        raise error from exc


def from_import_error(
    exc: ImportError, feature: str, *, model: bool = False
) -> MissingExtraError | None:
    """The :class:`MissingExtraError` for an import that failed because an extra's library is
    missing; None when the missing module belongs to no extra (a real bug, left to surface)."""
    name = getattr(exc, "name", None)
    extra = extra_of(name)
    if not isinstance(exc, ModuleNotFoundError) or extra is None or name is None:  # extra implies name
        return None
    cls = MissingModelExtraError if model else MissingExtraError
    return cls(feature, name.split(".", 1)[0], extra)
