"""What drawing a panel involves, without drawing it: the masks it shows (computed once per
drawing: a ground truth's union merges RLEs), how many instances, whether a switch to it still has
an image or masks to decode (a "cold" panel), and the ground truth's layer (made by the same two
functions on the GUI thread and by the prefetch: a prepared layer is found by its masks, box and
outline flag, so the two must agree on what those give)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from masklens.core.masks import Mask
from masklens.core.schema import Instance, Prediction, Sample
from masklens.gui.canvas.overlays import layer_labels, layer_table
from masklens.gui.views import PanelSpec

if TYPE_CHECKING:
    from masklens.gui.canvas.sample_view import LayerToggles, RenderContext


def panel_masks(spec: PanelSpec, sample: Sample, prediction: Callable[[str | None], Prediction | None],
                score_threshold: float) -> tuple[list[Mask], list[Instance]]:
    """What drawing ``spec`` shows: its ground-truth masks (each ground truth's union) and the
    predicted instances scoring ≥ ``score_threshold`` (also what the prefetch prepares)."""
    gts = [sample.gts[k].union() for k in spec.gts if k in sample.gts]
    pred = prediction(spec.prompt_id)
    return gts, [i for i in (pred.instances if pred else []) if i.score >= score_threshold]


def drawn_masks(spec: PanelSpec, ctx: RenderContext) -> tuple[list[Mask], list[Instance]]:
    """:func:`panel_masks` for this drawing, computed once (the cold check and the draw share it)."""
    key: Any = (spec.image, spec.prompt_id, tuple(spec.gts))
    if key not in ctx.masks_of:
        ctx.masks_of[key] = panel_masks(spec, ctx.sample, ctx.prediction, ctx.score_threshold)
    return ctx.masks_of[key]


def panel_is_cold(spec: PanelSpec, ctx: RenderContext) -> bool:
    """Whether drawing ``spec`` has an image or masks still to decode (a first visit the
    prefetch did not reach: the user did not pause on the sample before)."""
    ref = ctx.sample.images.get(spec.image)
    if ref is None:
        return False
    if not ctx.store.has_image(ref):
        return True
    h, w = ctx.store.image(ref).shape[:2]
    gt_masks, accepted = drawn_masks(spec, ctx)
    return not all(ctx.store.has_mask(m, h, w) for m in (*gt_masks, *(i.mask for i in accepted)))


def panel_instances(spec: PanelSpec, ctx: RenderContext) -> int:
    """How many predicted instances drawing ``spec`` shows (its cost grows with them)."""
    pred = ctx.prediction(spec.prompt_id)
    return sum(1 for i in pred.instances if i.score >= ctx.score_threshold) if pred else 0


def ground_truth_labels(sub: np.ndarray, tg: LayerToggles) -> np.ndarray:
    """The label map of the first ground truth's layer ("gt": filled, outlined when asked) over
    its box's crop ``sub``; its colours: :func:`ground_truth_table`."""
    return layer_labels(sub, tg.outlines)


def ground_truth_table(tg: LayerToggles) -> list[int]:
    return layer_table(tg.colours["gt"], tg.gt_opacity)
