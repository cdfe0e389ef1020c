"""`masklens models`: the backends, where each one's weights would come from, and whether they are here.

Nothing is downloaded and the network is never contacted: Hugging Face ids are
looked up in the local hub cache only (``HF_HUB_CACHE``, else ``HF_HOME/hub``,
else the default ``~/.cache/huggingface/hub``).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import sys
import textwrap
from dataclasses import asdict, dataclass, field
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
    from masklens.core.extras import extra_of, install_command, missing_for
    from masklens.core.models import registry

    entries = []
    for name in names or registry.backend_names():
        try:
            info = registry.backend_info(name)
        except ModuleNotFoundError as exc:
            extra = extra_of(exc.name)
            how = f": {install_command(extra)}" if extra else ""
            entries.append(BackendEntry(name, name, False, problem=f"not installed ({exc.name}){how}"))
            continue
        except MasklensError:
            raise
        except Exception as exc:  # a broken backend module must not hide the others
            entries.append(BackendEntry(name, name, False, problem=f"{type(exc).__name__}: {exc}"))
            continue
        absent = missing_for(info.extra) if info.extra else None
        if absent is not None:
            entries.append(BackendEntry(
                name, info.title, False, info.needs_weights, info.default_score_threshold,
                info.description, problem=f"not installed ({absent}): {install_command(info.extra)}"))
            continue
        module_name = registry._BACKEND_MODULES.get(name)
        module = importlib.import_module(module_name) if module_name else None
        specs = default_checkpoints(module, info) if module else (
            [("weights", info.default_weights)] if info.default_weights else [])
        if weights and name in weights:
            specs = [("weights", weights[name]), *[s for s in specs if s[0] != "weights"]]
        cks = [locate(spec, role) for role, spec in specs] if info.needs_weights or specs else []
        entries.append(BackendEntry(name, info.title, True, info.needs_weights,
                                    info.default_score_threshold, info.description, cks))
    return entries


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="list model backends and whether their weights are present")
    p.add_argument("names", nargs="*", metavar="NAME", help="only these backends")
    p.add_argument("--weights", metavar="PATH_OR_ID",
                   help="check this checkpoint instead of the default (with exactly one NAME)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from masklens.core.extras import check

    check("masklens models", ("huggingface_hub",))  # it reads the hub cache's layout
    if args.weights and len(args.names) != 1:
        raise MasklensError("--weights needs exactly one backend NAME", hint="e.g. masklens models sam3 --weights DIR")
    entries = inventory(args.names or None, {args.names[0]: args.weights} if args.weights else None)
    if args.json:
        data = [{**asdict(e), "ready": e.ready} for e in entries]
        print(json.dumps({"hf_cache": str(hf_cache_dir()), "backends": data}, indent=2))
        return 0
    print(f"Hugging Face cache: {hf_cache_dir()} (offline lookup; nothing is downloaded)")
    for e in entries:
        state = "ready" if e.ready else ("unavailable" if not e.available else "weights missing")
        print(f"\n{e.name:<14} {e.title}  [{state}]")
        if e.problem:
            print(f"  {e.problem}")
            continue
        if e.description:
            print(textwrap.fill(e.description, 96, initial_indent="  ", subsequent_indent="  "))
        if e.score_threshold is not None:
            print(f"  default score threshold: {e.score_threshold:g}")
        if not e.checkpoints:
            print("  no weights needed")
        for c in e.checkpoints:
            print(f"  {c.role}: {c.spec}\n    {c.status}: {c.location}")
            if c.hint and not c.present:
                print(f"    get it: {c.hint}")
    sys.stdout.flush()
    return 0
