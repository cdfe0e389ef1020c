"""Checkpoint resolution and safe loading.

A weights spec is a local directory (a ``save_pretrained`` folder), a local file (an original ``.pt``
checkpoint), or a Hugging Face model id resolved through the normal cache (``HF_HOME``), offline mode
respected. Loading never executes code from a checkpoint: safetensors are preferred, ``.pt`` files are
read with ``torch.load(weights_only=True)``, and ``trust_remote_code`` is never set.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from masklens.core.errors import ModelError

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
#: files fetched for a hub model: configs, safetensors weights and tokenizer data; never code, and
#: pickled ``pytorch_model*.bin`` only for repos without safetensors (read with weights_only=True)
HUB_ALLOW_PATTERNS = ["*.json", "*.safetensors", "*.txt", "*.model", "*.tiktoken"]
_HASHED_SUFFIXES = (".safetensors", ".pt", ".pth", ".bin", ".json", ".txt", ".model", ".yaml")


@dataclass
class ResolvedWeights:
    """Where a checkpoint lives on disk, what the user asked for, and (lazily) its content hash."""

    spec: str
    path: Path
    hub_id: str | None = None
    _sha256: str | None = field(default=None, repr=False)
    _hashing: Any = field(default=None, repr=False)  # a background hash (Future) under way

    @property
    def is_dir(self) -> bool:
        return self.path.is_dir()

    @property
    def sha256(self) -> str:
        """The content hash; waits for a background hash started by :meth:`hash_in_background`."""
        if self._sha256 is None:
            if self._hashing is None:
                self.hash_in_background()
            self._sha256 = _wait(self._hashing)
        return self._sha256

    def hash_in_background(self) -> None:
        """Start hashing in a thread (reads and hashing release the GIL) so that loading the
        weights does not wait for it; :attr:`sha256` waits for it when first needed."""
        if self._sha256 is not None or self._hashing is not None:
            return
        from concurrent.futures import Future

        future: Future[str] = Future()

        def work() -> None:
            try:
                future.set_result(checkpoint_hash(self.path))
            except BaseException as exc:  # noqa: BLE001 - re-raised where the hash is read
                future.set_exception(exc)

        self._hashing = future
        threading.Thread(target=work, name=f"hash {self.path.name}", daemon=True).start()

    def provenance(self, prefix: str = "checkpoint") -> dict[str, Any]:
        return {prefix: self.spec, f"{prefix}_path": str(self.path), f"{prefix}_sha256": self.sha256}


#: Hugging Face models whose files need an accepted licence and a logged-in account
GATED_MODELS = frozenset({"facebook/sam3"})


def _fetch_hint(hub_id: str, *, gated: bool | None = None, window: bool = False) -> str:
    """How to get a hub model's files: `hf download` (after `hf auth login` for a gated one), or a
    local folder (``--weights``; in the window, the Options… dialog)."""
    gated = hub_id in GATED_MODELS if gated is None else gated
    login = (f"it is gated: accept its licence on https://huggingface.co/{hub_id}, run "
             "`hf auth login`, then " if gated else "")
    local = ("enter a local folder as Weights in the prompt bar's Options… dialog" if window
             else "pass a local folder with --weights")
    return (f"{login}fetch it once with `hf download {hub_id}`, point HF_HOME at the cache that "
            f"holds it, or {local}")


def _hub_error(message: str, hub_id: str, *, gated: bool | None = None) -> ModelError:
    """A ModelError about a hub model's files, with the hint for the CLI and for the window."""
    return ModelError(message, hint=_fetch_hint(hub_id, gated=gated),
                      window_hint=_fetch_hint(hub_id, gated=gated, window=True))


def is_offline() -> bool:
    """True when the hub must not be contacted (HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE)."""
    truthy = {"1", "on", "yes", "true"}
    return any(os.environ.get(v, "").strip().lower() in truthy for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def looks_like_path(spec: str) -> bool:
    """True for specs that can only be file-system paths (never a hub id ``owner/name``)."""
    return (
        spec.startswith(("/", ".", "~"))
        or "\\" in spec
        or spec.count("/") > 1
        or spec.endswith((".pt", ".pth", ".safetensors", ".bin", ".yaml", ".yml"))
    )


def resolve_weights(spec: str | Path, *, backend: str, what: str = "weights") -> ResolvedWeights:
    """Resolve ``spec`` to a local path; a clear ModelError naming it and how to get it otherwise."""
    text = str(spec).strip()
    if not text:
        raise ModelError(f"{backend}: no {what} given", hint="pass --weights PATH_OR_HF_ID",
                         window_hint="enter a folder, file or Hugging Face id as Weights in the "
                         "prompt bar's Options… dialog")
    path = Path(text).expanduser()
    if path.exists():
        if path.is_dir() and not any(path.iterdir()):
            raise ModelError(f"{backend}: the {what} folder is empty", path=path, hint=_local_hint(what))
        if not os.access(path, os.R_OK):
            raise ModelError(f"{backend}: the {what} cannot be read (permission denied)", path=path)
        return ResolvedWeights(text, path.resolve())
    if looks_like_path(text) or not _HUB_ID.match(text):
        raise ModelError(f"{backend}: {what} not found", path=path, hint=_local_hint(what))
    return ResolvedWeights(text, _from_hub(text, backend, what), hub_id=text)


def fail_fast_offline(spec: str | Path, *, backend: str, what: str = "weights") -> None:
    """In offline mode, a Hugging Face id whose files are not in the cache raises the ModelError
    :func:`resolve_weights` would raise; nothing happens otherwise (online, local paths, found)."""
    text = str(spec).strip()
    if not text or not is_offline() or Path(text).expanduser().exists():
        return
    if looks_like_path(text) or not _HUB_ID.match(text):
        return
    _from_hub(text, backend, what)  # offline: a cache lookup, or the error


def _local_hint(what: str) -> str:
    return (
        f"give an existing folder saved with save_pretrained, an original .pt checkpoint, or a "
        f"Hugging Face model id for the {what}"
    )


def _from_hub(hub_id: str, backend: str, what: str) -> Path:
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import (
            GatedRepoError,
            HfHubHTTPError,
            LocalEntryNotFoundError,
            RepositoryNotFoundError,
        )
    except ModuleNotFoundError as exc:
        from masklens.core.runtime.extras import from_import_error

        raise (from_import_error(exc, backend, model=True) or exc) from exc
    try:
        folder = Path(snapshot_download(hub_id, local_files_only=True, allow_patterns=HUB_ALLOW_PATTERNS))
        if any(folder.glob("*.safetensors")) or any(folder.glob("*.bin")) or is_offline():
            return folder
    except (LocalEntryNotFoundError, FileNotFoundError, OSError, ValueError):
        pass
    if is_offline():
        raise _hub_error(
            f"{backend}: {what} '{hub_id}' are not in the Hugging Face cache and offline mode is on "
            "(HF_HUB_OFFLINE)", hub_id)
    try:
        folder = Path(snapshot_download(hub_id, allow_patterns=HUB_ALLOW_PATTERNS))
        if not any(folder.glob("*.safetensors")):  # older repos: pickled weights only
            folder = Path(snapshot_download(hub_id, allow_patterns=["*.json", "pytorch_model*.bin"]))
        return folder
    except GatedRepoError as exc:
        raise _hub_error(
            f"{backend}: '{hub_id}' is a gated model and this machine has no access to it", hub_id,
            gated=True) from exc
    except RepositoryNotFoundError as exc:
        raise _hub_error(f"{backend}: no Hugging Face model '{hub_id}' (or it is private)", hub_id) from exc
    except (HfHubHTTPError, OSError, ValueError) as exc:
        raise _hub_error(
            f"{backend}: could not fetch {what} '{hub_id}' from the Hugging Face hub "
            f"({type(exc).__name__}: {(str(exc).splitlines() or [''])[0]})", hub_id) from exc


def require_hf_folder(weights: ResolvedWeights, *, backend: str, what: str = "weights") -> Path:
    """A transformers checkpoint folder: has config.json and a weights file."""
    path = weights.path
    if not path.is_dir():
        raise ModelError(
            f"{backend}: expected a Hugging Face checkpoint folder (config.json + weights), got a file",
            path=path,
            hint=_local_hint(what),
        )
    if not (path / "config.json").is_file():
        raise ModelError(
            f"{backend}: the {what} folder has no config.json", path=path, hint=_local_hint(what)
        )
    if not any(path.glob("*.safetensors")) and not any(path.glob("*.bin")):
        raise ModelError(
            f"{backend}: the {what} folder has no weights (*.safetensors)",
            path=path,
            hint=_fetch_hint(weights.hub_id) if weights.hub_id else _local_hint(what),
            window_hint=_fetch_hint(weights.hub_id, window=True) if weights.hub_id else None,
        )
    return path


def pretrained_kwargs(folder: Path) -> dict[str, Any]:
    """Keyword arguments for ``from_pretrained`` that never run checkpoint code.

    Safetensors are required when the folder has them; otherwise transformers reads ``.bin`` files
    with ``torch.load(weights_only=True)`` (its only mode in transformers 5).
    """
    kwargs: dict[str, Any] = {"trust_remote_code": False}
    if any(folder.glob("*.safetensors")):
        kwargs["use_safetensors"] = True
    return kwargs


def load_pretrained(cls: Any, folder: Path, *, backend: str, what: str = "weights", **extra: Any) -> Any:
    """``cls.from_pretrained(folder)`` with safe options and load errors turned into a ModelError."""
    import pickle

    from transformers import PreTrainedModel

    kwargs = pretrained_kwargs(folder)
    if not (isinstance(cls, type) and issubclass(cls, PreTrainedModel)):
        kwargs.pop("use_safetensors", None)  # processors and tokenizers read no weights
    try:
        return cls.from_pretrained(str(folder), **kwargs, **extra)
    except pickle.UnpicklingError as exc:
        raise ModelError(
            f"{backend}: refusing to load the {what}: the pickled weights hold Python objects other "
            "than tensors, which could run code when unpickled",
            path=folder,
            hint="use safetensors weights (model.safetensors) from a trusted source",
        ) from exc
    except (OSError, ValueError, KeyError, RuntimeError, TypeError) as exc:
        raise ModelError(
            f"{backend}: the {what} in this folder cannot be loaded as {cls.__name__} "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})",
            path=folder,
            hint="check that the folder holds a checkpoint of this model family and is complete",
        ) from exc


def load_hf_pair(
    model_cls: Any, processor_cls: Any, weights: ResolvedWeights, *, backend: str, device: str, label: str = ""
) -> tuple[Any, Any]:
    """``(processor, model)`` from one transformers checkpoint folder, the model on ``device`` in
    eval mode; ``label`` names the part in messages ("OWLv2" -> "OWLv2 weights", "OWLv2 processor")."""
    prefix = f"{label} " if label else ""
    folder = require_hf_folder(weights, backend=backend, what=f"{prefix}weights")
    processor = load_pretrained(processor_cls, folder, backend=backend, what=f"{prefix}processor")
    model = load_pretrained(model_cls, folder, backend=backend, what=f"{prefix}weights")
    return processor, model.to(device).eval()


def safe_torch_load(path: Path, *, backend: str) -> Any:
    """Read a ``.pt`` checkpoint with ``weights_only=True``: tensors and plain containers, never code."""
    import pickle

    from masklens.core.models.torch_device import import_torch

    torch = import_torch()
    try:
        return torch.load(str(path), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        raise ModelError(
            f"{backend}: refusing to load this checkpoint: it holds Python objects other than tensors, "
            "which could run code when unpickled",
            path=path,
            hint="use the official checkpoint, or re-save it as a plain state_dict / safetensors",
        ) from exc
    except (OSError, RuntimeError, EOFError, ValueError) as exc:
        raise ModelError(
            f"{backend}: the checkpoint cannot be read ({type(exc).__name__}: {exc})",
            path=path,
            hint="the file may be truncated; download it again",
        ) from exc


def _wait(future: Any) -> str:
    """The result of a background hash, waiting in steps so that the running thread's cancel check
    (:func:`masklens.core.models.interrupt.cancel_check`: Cancel in the window) can stop the wait."""
    from concurrent.futures import TimeoutError as Pending

    from masklens.core.models.interrupt import current_check

    while True:
        try:
            return future.result(timeout=0.05)
        except Pending:
            check = current_check()
            if check is not None:
                check()


def _file_hash(path: Path) -> str:
    """sha256 of a file; for a hub-cache symlink to a sha256-named blob, that name (no re-read);
    other files are read once per (path, size, mtime, inode), remembered across processes in the
    cache folder (:mod:`masklens.core.cache.file_hashes`)."""
    if path.is_symlink():
        target = Path(os.path.realpath(path))
        if target.parent.name == "blobs" and re.fullmatch(r"[0-9a-f]{64}", target.name):
            return target.name
    from masklens.core.cache.file_hashes import file_sha256

    return file_sha256(path)


def checkpoint_hash(path: Path) -> str:
    """Content hash of a checkpoint file, or of a folder's weight/config files (names + contents)."""
    path = Path(path)
    if path.is_file():
        return _file_hash(path)
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _HASHED_SUFFIXES)
    for file in files:
        digest.update(file.relative_to(path).as_posix().encode())
        digest.update(b"\0")
        digest.update(_file_hash(file).encode())
        digest.update(b"\n")
    return digest.hexdigest()
