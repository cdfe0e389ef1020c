"""Which model backends are installed and where each one's checkpoints would be read from
(a local path or the Hugging Face cache), with whether they are there. Used by `masklens models`
and by the window's model list."""

from __future__ import annotations

import importlib
import inspect
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from masklens.core.errors import MasklensError

_WEIGHT_SUFFIXES = (".safetensors", ".pt", ".pth", ".bin")


@dataclass
class Checkpoint:
    """One checkpoint a backend uses: its role, the spec, where it would be read from, and status."""

    role: str
    spec: str
    location: str
    present: bool
    status: str  # "present", "partial: …", "missing", "not found"
    hint: str = ""


@dataclass
class BackendEntry:
    name: str
    title: str
    available: bool
    needs_weights: bool = True
    score_threshold: float | None = None
    description: str = ""
    checkpoints: list[Checkpoint] = field(default_factory=list)
    problem: str = ""

    @property
    def ready(self) -> bool:
        return self.available and all(c.present for c in self.checkpoints)


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache as the environment names it now (read at call time)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def locate(spec: str, role: str = "weights") -> Checkpoint:
    """Where ``spec`` (local path or Hugging Face id) would be read from, and whether it is there."""
    from masklens.core.models.weights import _HUB_ID, _fetch_hint, looks_like_path

    path = Path(spec).expanduser()
    if path.exists() or looks_like_path(spec) or not _HUB_ID.match(spec):
        if not path.exists():
            return Checkpoint(role, spec, str(path), False, "not found",
                              "give an existing checkpoint folder or file with --weights")
        if path.is_dir() and not any(p.suffix in _WEIGHT_SUFFIXES for p in path.iterdir()):
            return Checkpoint(role, spec, str(path), False, "partial: no weights file in the folder")
        return Checkpoint(role, spec, str(path), True, "present")
    from huggingface_hub import try_to_load_from_cache

    cache = hf_cache_dir()
    repo_dir = cache / f"models--{spec.replace('/', '--')}"
    hint = _fetch_hint(spec)  # the same advice the backend gives when it cannot load them
    found = try_to_load_from_cache(spec, "config.json", cache_dir=cache)
    if not isinstance(found, str):
        return Checkpoint(role, spec, str(repo_dir), False, "missing", hint)
    snapshot = Path(found).parent
    if not any(p.name.endswith(_WEIGHT_SUFFIXES) for p in snapshot.iterdir()):
        return Checkpoint(role, spec, str(snapshot), False, "partial: config only, no weights", hint)
    return Checkpoint(role, spec, str(snapshot), True, "present")


def default_checkpoints(module: Any, info: Any) -> list[tuple[str, str]]:
    """(role, spec) of a backend's default checkpoints: ``info.default_weights``, then any
    ``*_weights`` defaults in its segmenter classes' ``OPTIONS`` (e.g. the SAM 2 stage)."""
    out: list[tuple[str, str]] = []
    if info.default_weights:
        out.append(("weights", str(info.default_weights)))
    for _, cls in inspect.getmembers(module, inspect.isclass):
        if cls.__module__ != module.__name__:
            continue
        for key, value in (getattr(cls, "OPTIONS", None) or {}).items():
            if key.endswith("weights") and isinstance(value, str) and value and (key, value) not in out:
                out.append((key, value))
    return out


def inventory(names: list[str] | None = None, weights: dict[str, str] | None = None) -> list[BackendEntry]:
    """Every backend (or those named) with its checkpoints' location and presence.

    ``weights`` maps a backend name to a spec that replaces its default main checkpoint.
    """
    from masklens.core.models import registry
    from masklens.core.runtime.extras import extra_of, install_command, missing_for

    entries = []
    for name in names or registry.backend_names():
        try:
            info = registry.backend_info(name)
        except ModuleNotFoundError as exc:
            extra = extra_of(exc.name, within="models")
            how = f": {install_command(extra)}" if extra else ""
            entries.append(BackendEntry(name, name, False, problem=f"not installed ({exc.name}){how}"))
            continue
        except MasklensError:
            raise
        except Exception as exc:  # a broken backend module must not hide the others
            entries.append(BackendEntry(name, name, False, problem=f"{type(exc).__name__}: {exc}"))
            continue
        absent = missing_for(info.extra) if info.extra else None
        if absent is not None and info.extra:  # absent is only known for an extra
            entries.append(BackendEntry(
                name, info.title, False, info.needs_weights, info.default_score_threshold,
                info.description, problem=f"not installed ({absent}): {install_command(info.extra)}"))
            continue
        module_name = registry.backend_module(name)
        module = importlib.import_module(module_name) if module_name else None
        specs = default_checkpoints(module, info) if module else (
            [("weights", info.default_weights)] if info.default_weights else [])
        if weights and name in weights:
            specs = [("weights", weights[name]), *[s for s in specs if s[0] != "weights"]]
        cks = [locate(spec, role) for role, spec in specs] if info.needs_weights or specs else []
        entries.append(BackendEntry(name, info.title, True, info.needs_weights,
                                    info.default_score_threshold, info.description, cks))
    return entries
