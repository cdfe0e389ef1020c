"""Benchmark files on the Hugging Face Hub: ``hf://datasets/OWNER/NAME[@REVISION]/path``.

A file is fetched with ``huggingface_hub.hf_hub_download`` into the hub's own cache (a folder
with ``snapshot_download`` restricted to it), so a second use reads the cache. Offline mode is
respected (``HF_HUB_OFFLINE=1``, read when the path is resolved): the cached copy is used, and a
file that is not cached is a clear error, never a network wait. ``HF_HUB_CACHE`` / ``HF_HOME``
say where the cache is, as for every Hugging Face library. huggingface_hub alone is the
``[hub]`` extra (``[models]`` has it too).

Paths are parsed by huggingface_hub's own parser (``parse_hf_uri``, what
``HfFileSystem.resolve_path`` parses with, minus its network check): ``@refs/pr/1`` revisions
and the ``hf://OWNER/NAME`` model form work as on the Hub. A ``..`` (or ``.``) segment is
refused: it would leave the repository's snapshot. In the cache a snapshot's files are
symlinks into the repository's ``blobs/``, which the outside-root guard treats as inside the
snapshot (:func:`masklens.core.files.paths.inside_root`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from masklens.core.errors import MasklensError

PREFIX = "hf://"
_TRUE = {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class HubPath:
    """A parsed ``hf://`` path."""

    repo_type: str  # "dataset" (``datasets/``), "model" (``models/`` or none) or "space"
    repo_id: str  # OWNER/NAME
    revision: str | None
    path: str  # inside the repository ("" for its root)
    url: str

    def download_hint(self, folder: bool = False) -> str:
        """The `hf download` command that puts this file (or folder) into the cache."""
        what = f" --include '{self.path}/*'" if folder and self.path else f" {self.path}" if self.path else ""
        kind = f" --repo-type {self.repo_type}" if self.repo_type != "model" else ""
        rev = f" --revision {self.revision}" if self.revision else ""
        return f"hf download {self.repo_id}{what}{kind}{rev}"


def is_hub_path(value: object) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)


_SYNTAX = "write hf://datasets/OWNER/NAME[@REVISION]/path/in/the/repo"


def refuse_dot_segments(url: str) -> None:
    """A ``..`` or ``.`` segment anywhere in an ``hf://`` path is an error (it would leave the
    snapshot, or name one file twice)."""
    body = url[len(PREFIX):].split("?", 1)[0]
    # a backslash too: huggingface_hub's own file-name check splits on both (a traceback before)
    bad = next((seg for seg in re.split(r"[/\\]", body) if seg in ("..", ".")), None)
    if bad is not None:
        raise MasklensError(f"'{bad}' in a Hugging Face path", path=url,
                            hint="name the file by its path inside the repository, without '.' or '..'")


def parse(url: str) -> HubPath:
    """``hf://[datasets/|models/|spaces/]OWNER/NAME[@REVISION][/path]`` by huggingface_hub's own
    parser (the hand parser below only when huggingface_hub is older than ``parse_hf_uri``)."""
    refuse_dot_segments(url)
    try:
        from huggingface_hub import parse_hf_uri
        from huggingface_hub.errors import HfUriError
    except ImportError:
        return _parse_by_hand(url)
    try:
        uri = parse_hf_uri(url)
    except HfUriError as exc:
        raise MasklensError(f"'{url}' is not a Hugging Face path ({exc})", hint=_SYNTAX) from None
    if uri.type not in ("model", "dataset", "space"):
        raise MasklensError(f"'{url}' is a Hugging Face {uri.type}, not a repository", hint=_SYNTAX)
    return HubPath(uri.type, uri.id, uri.revision, uri.path_in_repo.strip("/"), url)


def _parse_by_hand(url: str) -> HubPath:
    parts = url[len(PREFIX):].split("/")
    types = {"datasets": "dataset", "models": "model", "spaces": "space"}
    if parts and parts[0] not in types:
        parts = ["models", *parts]  # hf://OWNER/NAME is a model, as on the Hub
    if len(parts) < 3 or not parts[1] or not parts[2]:
        raise MasklensError(f"'{url}' is not a Hugging Face path", hint=_SYNTAX)
    name, _, revision = parts[2].partition("@")
    return HubPath(types[parts[0]], f"{parts[1]}/{name}", revision or None,
                   "/".join(p for p in parts[3:] if p), url)


def offline() -> bool:
    """Whether Hugging Face's offline mode is on: the variable as it is now, or as
    huggingface_hub read it when it was imported."""
    import sys

    hub = sys.modules.get("huggingface_hub.constants")
    return (os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE
            or bool(getattr(hub, "HF_HUB_OFFLINE", False)))


def resolve(url: str, *, folder: bool = False) -> Path:
    """The local path of ``url`` in the Hugging Face cache, downloaded first unless cached."""
    from masklens.core.runtime.extras import MissingExtraError, is_installed

    refuse_dot_segments(url)
    if not is_installed("huggingface_hub"):
        raise MissingExtraError(f"{url} (a Hugging Face path)", "huggingface_hub", "hub")
    hub = parse(url)
    folder = folder or not hub.path
    from huggingface_hub import errors, hf_hub_download, snapshot_download

    common: dict[str, Any] = {"repo_type": hub.repo_type, "revision": hub.revision,
                              "cache_dir": os.environ.get("HF_HUB_CACHE") or None,
                              "local_files_only": offline()}
    try:
        if folder:
            patterns = [f"{hub.path}/*", f"{hub.path}/**"] if hub.path else None
            root = Path(snapshot_download(hub.repo_id, allow_patterns=patterns, **common))
            local = root / hub.path
            if not local.exists():  # the snapshot is cached, the folder is not in it
                missing = errors.LocalEntryNotFoundError if offline() else errors.EntryNotFoundError
                raise missing(f"{hub.path} not in {hub.repo_id}")
            return local
        return Path(hf_hub_download(hub.repo_id, hub.path, **common))
    except errors.LocalEntryNotFoundError:
        if offline():
            raise MasklensError(
                "not in the Hugging Face cache and HF_HUB_OFFLINE is set", path=url,
                hint=f"download it once online ({hub.download_hint(folder)}) or unset HF_HUB_OFFLINE",
            ) from None
        raise MasklensError("cannot reach the Hugging Face Hub and the file is not cached",
                            path=url, hint=f"check the connection, then {hub.download_hint(folder)}") from None
    except errors.GatedRepoError:
        raise MasklensError(f"{hub.repo_id} is gated", path=url,
                            hint="accept its terms on the Hub, then `hf auth login`") from None
    except errors.RepositoryNotFoundError:
        raise MasklensError(f"no {hub.repo_type} repository {hub.repo_id} on the Hub (or it is private)",
                            path=url, hint="check the name; for a private one `hf auth login`") from None
    except errors.RevisionNotFoundError:
        raise MasklensError(f"{hub.repo_id} has no revision {hub.revision}", path=url) from None
    except errors.EntryNotFoundError:
        raise MasklensError(f"no file {hub.path} in {hub.repo_id}", path=url) from None
    except errors.HfHubHTTPError as exc:
        raise MasklensError(f"the Hugging Face Hub answered: {exc}", path=url) from None
    except ValueError as exc:  # huggingface_hub's own checks (HFValidationError: repo id, file name)
        raise MasklensError(f"not a valid Hugging Face path: {_first_line(exc)}", path=url,
                            hint=_SYNTAX) from None
    except OSError as exc:  # e.g. a name too long for the cache's file system
        raise MasklensError(f"cannot read it from the Hugging Face cache: {exc.strerror or exc}",
                            path=url) from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


#: the kinds' arguments that name folders (others with metavar DIR count too)
FOLDER_ARGUMENTS = frozenset({"images", "root", "pred_dir"})


def folder_arguments(kind: Any) -> frozenset[str]:
    """The destinations of ``kind``'s arguments that name a folder."""
    from masklens.core.scoring.kind_args import file_actions

    return frozenset(a.dest for a in file_actions(kind)
                     if a.dest in FOLDER_ARGUMENTS or a.metavar == "DIR")


def any_hub_path(files: Mapping[str, Any]) -> bool:
    return any(is_hub_path(v) or (isinstance(v, list | tuple) and any(map(is_hub_path, v)))
               for v in files.values())


def resolve_files(files: Mapping[str, Any], folders: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``files`` with every ``hf://`` value (also inside lists) replaced by its local path;
    keys in ``folders`` name folders (fetched with all their files)."""

    def one(key: str, value: Any) -> Any:
        if is_hub_path(value):
            return str(resolve(value, folder=key in folders or value.endswith("/")))
        if isinstance(value, list | tuple):
            return type(value)(one(key, v) for v in value)
        return value

    return {k: one(k, v) for k, v in files.items()}


#: a URL's scheme (``HF://``, ``s3://``, ``https://``): what a path given as one would start with
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def local_files(kind: Any, files: Mapping[str, Any]) -> dict[str, Any]:
    """A kind's file arguments with ``hf://datasets/…`` paths fetched into (or found in) the
    Hugging Face cache, folders with all their files; the others as given. A value with any
    other scheme (``HF://`` in capitals, ``s3://``, ``https://``) is refused in one line: it is
    no local path, and read as one it would name a folder that is not there (an ``--images``
    that ``score`` never opens would pass unnoticed)."""
    for dest, value in files.items():
        for one in value if isinstance(value, list | tuple) else [value]:
            if isinstance(one, str) and _SCHEME.match(one) and not is_hub_path(one):
                raise MasklensError(f"--{dest.replace('_', '-')} {one}: masklens reads local paths and Hugging "
                                    f"Face paths ({PREFIX}datasets/OWNER/NAME/…, the scheme in lowercase)")
    return resolve_files(files, folder_arguments(kind)) if any_hub_path(files) else dict(files)
