"""Images decoded together (one batch of a Ray actor call, a report's gallery sample) fit a
decoded-size budget per batch (``MASKLENS_MAX_BATCH_BYTES``), summed from the images'
headers before any pixel is decoded; the per-image budget (``MASKLENS_MAX_IMAGE_BYTES``,
core/files/limits.py) holds for each image too.

:func:`plan_batches` cuts a list of images into consecutive batches of at most ``max_images``
images whose declared decoded sizes (H × W × 3 bytes) sum to at most the budget: a batch that
would go over is split (said once on stderr, each split in the log, naming the images and the
limit); an image that alone needs more than the batch budget is refused with a
:class:`DataFormatError` naming it and the limit.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from masklens.core.errors import DataFormatError
from masklens.core.files import limits

log = logging.getLogger("masklens")

_MIB = float(1 << 20)


@dataclass
class BatchPlan:
    """Batches of indexes into the planned images, and the splits the budget made."""

    batches: list[list[int]] = field(default_factory=list)
    #: one line per batch cut short by the budget (not by ``max_images``)
    splits: list[str] = field(default_factory=list)


def declared_bytes(path: Path) -> int:
    """The decoded RGB size an image file declares in its header (0 when it cannot tell: the
    decoder then reports the file); over the per-image budget it is a DataFormatError."""
    size = limits.check_image_budget(Path(path))
    return 0 if size is None else size[0] * size[1] * 3


def plan_batches(paths: Sequence[Path], max_images: int, *, what: str = "image batch") -> BatchPlan:
    """``paths`` in consecutive batches of ≤ ``max_images`` images within the batch budget."""
    budget = limits.current().max_batch_bytes
    plan = BatchPlan()
    current: list[int] = []
    total = 0
    for i, path in enumerate(paths):
        need = declared_bytes(path)
        if need > budget:
            raise DataFormatError(
                f"image needs {need / _MIB:.0f} MiB decoded, more than the limit of "
                f"{budget / _MIB:.0f} MiB per {what}", path=path,
                hint="raise MASKLENS_MAX_BATCH_BYTES if this is intended")
        if current and (len(current) >= max(1, max_images) or total + need > budget):
            if len(current) < max(1, max_images):
                names = ", ".join(Path(paths[j]).name for j in current)
                plan.splits.append(
                    f"{what} split before {Path(path).name}: with it, {names} and it would need "
                    f"{(total + need) / _MIB:.0f} MiB decoded, over the limit of {budget / _MIB:.0f} "
                    f"MiB per batch (MASKLENS_MAX_BATCH_BYTES)")
            plan.batches.append(current)
            current, total = [], 0
        current.append(i)
        total += need
    if current:
        plan.batches.append(current)
    _say(plan.splits)
    return plan


_said = False


def _say(splits: list[str]) -> None:
    """Each split in the log; the first of the process on stderr too."""
    global _said
    for line in splits:
        log.info(line)
    if splits and not _said:
        _said = True
        more = f" ({len(splits) - 1} more: in the log)" if len(splits) > 1 else ""
        print(f"masklens: note: {splits[0]}{more}", file=sys.stderr)


__all__ = ["BatchPlan", "declared_bytes", "plan_batches"]
