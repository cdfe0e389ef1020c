"""An accepted edit of the ground truth, recorded as a correction: the rules every front end shares.

The window shows either the loaded ground truth or the corrected one (the corrections applied).
:class:`CorrectionRecorder` turns what was edited there into a :class:`~.corrections.Correction`
of the *loaded* ground truth:

- **index mapping**: an instance index of the corrected ground truth shown is mapped back to its
  index in the loaded one (``corrected_from``); an instance a correction added has none, so
  changing it retracts that correction and adds the new mask in its place;
- **merging**: a correction replaces this reviewer's earlier one of the same instance, so a new
  mask keeps the category an earlier correction gave it, and a category change keeps the
  corrected mask;
- **verdict link**: the correction names the uid of the sample's latest current "Ground truth
  wrong" verdict;
- **tools**: the ``tool`` names every tool of the edit's operations in the order of first use
  (:func:`~.corrections.join_tools`, e.g. "brush+eraser+fill"); a new instance starts with
  "new", a deletion is "delete", a category change "category".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from masklens.core.masks import Mask
from masklens.core.review.corrections import Correction, join_tools
from masklens.core.review.store import ReviewStore


@dataclass(frozen=True)
class Edit:
    """An accepted edit as the window shows it: ``instance`` indexes the ground truth shown
    (None: a new instance), ``mask`` None deletes it, ``tools`` are the tools of its operations,
    ``category`` a new category (None: keep), ``keep_mask`` a category change that keeps the
    reviewer's corrected mask."""

    sample_id: str
    gt_key: str
    instance: int | None
    mask: Mask | None
    tools: Sequence[str] = ()
    category: Any = None
    keep_mask: bool = False


class CorrectionRecorder:
    """Records edits of one benchmark (``benchmark``: its key) in ``store``."""

    def __init__(self, store: ReviewStore, benchmark: str) -> None:
        self.store, self.benchmark = store, benchmark

    def record(self, edit: Edit, *, reviewer: str, note: str = "",
               shown_from: Sequence[int | None] | None = None,
               shown_gt_key: str | None = None) -> Correction:
        """Record ``edit`` (committed before this returns). ``shown_from``: the corrected ground
        truth's ``corrected_from`` when the edit was made on it (its instance -> the loaded index,
        None for an added one), None when the loaded ground truth was shown; ``shown_gt_key`` its
        key (the canonical key of ``edit.gt_key``)."""
        instance, mask, category = edit.instance, edit.mask, edit.category
        retract = None
        if shown_from is not None:
            instance, retract = self.loaded_instance(edit.sample_id, shown_gt_key or edit.gt_key,
                                                     instance, shown_from)
        tool = self.tool_of(edit, new=instance is None and retract is None)
        prior = self.prior(edit.sample_id, edit.gt_key, instance, reviewer) if retract is None else None
        if prior is not None and mask is not None:
            category = prior.category if category is None else category
            mask = prior.mask if edit.keep_mask and prior.mask is not None else mask
        if retract is not None:
            self.store.retract_correction(retract)
        return self.store.add_correction(
            self.benchmark, edit.sample_id, edit.gt_key, instance, mask, tool=tool, note=note,
            verdict_uid=self.verdict_uid(edit.sample_id), reviewer=reviewer, category=category)

    @staticmethod
    def tool_of(edit: Edit, *, new: bool) -> str:
        if edit.mask is None:
            return "delete"
        if new:
            return join_tools(["new", *edit.tools])
        if edit.category is not None:
            return "category"
        return join_tools(edit.tools)

    def loaded_instance(self, sample_id: str, shown_gt_key: str, instance: int | None,
                        shown_from: Sequence[int | None]) -> tuple[int | None, Correction | None]:
        """An instance index of the corrected ground truth shown -> (its index in the loaded
        ground truth or None, the correction to retract first when a correction added it)."""
        if instance is None:
            return None, None
        if instance >= len(shown_from):
            return instance, None
        if shown_from[instance] is not None:
            return shown_from[instance], None
        nth = sum(1 for o in shown_from[:instance] if o is None)
        added = sorted((c for c in self.store.corrections(self.benchmark)
                        if c.sample_id == sample_id and c.instance is None
                        and c.target[2] == shown_gt_key), key=lambda c: c.time)
        return None, added[nth] if nth < len(added) else None

    def prior(self, sample_id: str, gt_key: str, instance: int | None,
              reviewer: str) -> Correction | None:
        """This reviewer's current correction of a loaded instance (None for none)."""
        if instance is None:
            return None
        return next((c for c in reversed(self.store.corrections(self.benchmark, reviewer=reviewer))
                     if (c.sample_id, c.gt_key, c.instance) == (sample_id, gt_key, instance)), None)

    def verdict_uid(self, sample_id: str) -> str:
        """The uid of the sample's latest current "Ground truth wrong" verdict ("" for none)."""
        newest = self.store.newest_current(self.benchmark, sample_id, "gt_wrong")
        return newest.uid if newest is not None else ""
