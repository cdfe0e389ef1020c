"""Optional dependencies ("extras"): which pip extra provides a library, and one-line messages
that say how to install it.

The core install (``pip install masklens``) is the scorer; ``[gui]`` adds the window,
``[models]`` the model backends, ``[sam2]`` Meta's original SAM 2 code, ``[ray]`` ray,
``[hub]`` huggingface_hub alone (``hf://`` paths; ``[models]`` includes it).

Which library belongs to which extra is read from masklens' own metadata (the ``extra == "…"``
markers of its requirements, as pyproject.toml declares them), not kept by hand here. A
requirement's import names are those its installed distribution provides (PySide6-Essentials:
PySide6 and shiboken's modules); a distribution that is not installed is known by its name (``huggingface-hub`` → ``huggingface_hub``,
``hydra-core`` → ``hydra``). A library of several extras belongs, for messages, to the smallest
(huggingface_hub: ``[hub]``, 30 MB, not ``[models]``), unless the caller names the extra it needs.
Nothing here imports any of them: presence is checked with ``importlib.util.find_spec``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import re
from types import ModuleType

from masklens.core.errors import MasklensError, ModelError

#: the extras the messages and checks know (``all`` and ``dev`` are no features)
FEATURE_EXTRAS = ("gui", "models", "sam2", "ray", "hub")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _name(requirement: str) -> str:
    match = _NAME.match(requirement)
    return match.group(1) if match else ""


@functools.cache
def extra_requirements() -> dict[str, tuple[str, ...]]:
    """Extra -> the distributions it adds itself (its ``extra == …`` requirements, without
    masklens' own extras it includes), from masklens' metadata; empty without metadata."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        lines = requires("masklens") or []
    except PackageNotFoundError:
        return {}
    out: dict[str, list[str]] = {}
    for line in lines:
        marker = _EXTRA.search(line.partition(";")[2])
        name = _name(line)
        if marker and name and name.lower() != "masklens":
            out.setdefault(marker.group(1), []).append(name)
    return {extra: tuple(names) for extra, names in out.items()}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _import_names(dist: str) -> list[str]:
    """The import names of ``dist``: those its installed metadata lists (``top_level.txt``; public
    ones first); else its name as a module, the one that imports first (``huggingface-hub`` →
    ``huggingface_hub``; ``hydra-core`` → ``hydra``; ``PySide6-Essentials`` → ``PySide6``: many
    wheels list no top level, and a bundle keeps the modules, not the metadata), else the whole
    name (the distribution is not installed). One distribution's metadata is read, never the
    whole environment's (``packages_distributions`` takes a third of a second)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        listed = distribution(dist).read_text("top_level.txt") or ""
    except PackageNotFoundError:
        listed = ""
    found = sorted((m for m in listed.split() if not m.startswith("_")), key=len)
    if found:
        return found
    names = list(dict.fromkeys([dist.replace("-", "_").replace(".", "_"), re.split(r"[-_.]", dist)[0]]))
    return sorted(names, key=lambda name: not is_installed(name))


@functools.cache
def extra_modules() -> dict[str, tuple[str, ...]]:
    """Extra -> the import names it must provide for its features to work (one per requirement:
    its main module)."""
    return {extra: tuple(_import_names(d)[0] for d in dists)
            for extra, dists in extra_requirements().items() if extra in FEATURE_EXTRAS}


@functools.cache
def extra_map() -> dict[str, str]:
    """Top-level import name -> the extra that installs it (the smallest extra holding it)."""
    by_size = sorted(((e, d) for e, d in extra_requirements().items() if e in FEATURE_EXTRAS),
                     key=lambda item: len(item[1]))
    out: dict[str, str] = {}
    for extra, dists in by_size:
        for dist in dists:
            for module in _import_names(dist):
                out.setdefault(module, extra)
    return out


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


def extra_of(module: str | None, *, within: str | None = None) -> str | None:
    """The extra that installs ``module`` (a dotted name is looked up by its top level): ``within``
    when that extra provides it (a model backend needs ``[models]``'s huggingface_hub, not
    ``[hub]``), else the smallest extra that does."""
    top = (module or "").split(".", 1)[0]
    if within is not None and top in extra_modules().get(within, ()):
        return within
    return extra_map().get(top)


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
    return first_missing(extra_modules()[extra])


def check(feature: str, modules: tuple[str, ...] | list[str], *, model: bool = False,
          extra: str | None = None) -> None:
    """Raise :class:`MissingExtraError` (``MissingModelExtraError`` for a model) when one of
    ``modules`` is not installed, naming ``extra`` (default: the smallest extra holding it)."""
    absent = first_missing(modules)
    if absent is not None:
        cls = MissingModelExtraError if model else MissingExtraError
        raise cls(feature, absent, extra or extra_of(absent) or "all")


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
    extra = extra_of(name, within="models" if model else None)
    if not isinstance(exc, ModuleNotFoundError) or extra is None or name is None:  # extra implies name
        return None
    cls = MissingModelExtraError if model else MissingExtraError
    return cls(feature, name.split(".", 1)[0], extra)
