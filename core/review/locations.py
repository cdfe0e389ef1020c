"""Where a benchmark's review store lives, and the key a benchmark's verdicts are filed under."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path


def benchmark_key(benchmark: object) -> str:
    """A stable key for a loaded Benchmark: ``kind:name``."""
    return f"{getattr(benchmark, 'kind', '')}:{getattr(benchmark, 'name', '')}"


def default_store_path(benchmark_sources: Mapping[str, Path] | Iterable[str | Path]) -> Path:
    """Where a benchmark's verdicts live: beside its first source file (e.g. the annotation
    file), as ``<stem>.masklens-reviews.sqlite``. When that folder is not writable, there is
    no source, or the source is a file bundled with masklens (the demo), the store goes to
    the user data dir (the ``data_dir`` setting, ``$MASKLENS_DATA_DIR``), named after the source's path."""
    import os

    sources = list(benchmark_sources.values() if isinstance(benchmark_sources, Mapping)
                   else benchmark_sources)
    first = Path(sources[0]) if sources else None
    if first is not None and not is_bundled(first):
        folder = first if first.is_dir() else first.parent
        stem = first.name if first.is_dir() else first.stem
        if folder.is_dir() and os.access(folder, os.W_OK):
            return folder / f"{stem}.masklens-reviews.sqlite"
    digest = hashlib.sha256(str(first.resolve() if first else "").encode()).hexdigest()[:16]
    from masklens.core.runtime import config

    return config.get("data_dir") / "reviews" / f"{(first.stem if first else 'unsaved')}-{digest}.sqlite"


def is_bundled(path: Path) -> bool:
    """Whether ``path`` is inside the installed masklens resources (never written to)."""
    import masklens.resources as res

    try:
        return path.resolve().is_relative_to(Path(res.__file__).resolve().parent)
    except OSError:
        return False
