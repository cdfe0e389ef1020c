"""What drawing a neighbouring sample's panels will need, made by the image prefetcher's thread
(:mod:`masklens.gui.jobs.prefetch`) while the user looks at the current sample: the masks decoded at
the image's size, the ground truth's and the instances' label maps with their ARGB images, and the
score labels' anchors. The next sample switch then finds them (``build_layers`` takes a prepared
layer only for the very arrays, box and outline flag it draws, and its image only for the same
colour table), instead of decoding and labelling on the GUI thread, where it would be a large
part of a first visit's switch."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtGui import QImage

from masklens.core.schema import Prediction, Sample
from masklens.gui.canvas.overlays import crop, indexed_image
from masklens.gui.canvas.panel_plan import ground_truth_labels, ground_truth_table, panel_masks
from masklens.gui.canvas.prepared import Prepared, prepare_instances
from masklens.gui.canvas.sample_view import LayerToggles
from masklens.gui.views import PanelSpec

#: what the prefetcher is given: an image ref and what to do with its decoded pixels
PrefetchItem = tuple[Any, Callable[[np.ndarray], None]]


def panel_prefetch(store: Any, specs: list[PanelSpec], sample: Sample,
                   prediction: Callable[[str | None], Prediction | None], score_threshold: float,
                   toggles: LayerToggles) -> list[PrefetchItem]:
    """One item per panel of ``sample`` with an image: (its image ref, what prepares its layers as
    drawing them with these toggles at this threshold would, once the image is decoded). The
    toggles are copied: a change before the switch makes drawing find nothing ready, as usual."""
    tg = dataclasses.replace(toggles, colours=dict(toggles.colours))
    items: list[PrefetchItem] = []
    for spec in specs:
        ref = sample.images.get(spec.image)
        if ref is None:
            continue

        def prepare(rgb: np.ndarray, spec: PanelSpec = spec) -> None:
            gt_masks, accepted = panel_masks(spec, sample, prediction, score_threshold)  # unions: here too
            h, w = rgb.shape[:2]
            gts = [store.mask(m, h, w) for m in gt_masks]
            for instance in accepted:  # the score labels' anchors (pycocotools, ~1 ms each)
                _ = instance.mask.area, instance.mask.bbox
            if tg.error:  # the error view's one layer is made when drawn; its masks are decoded here
                for instance in accepted:
                    store.mask(instance.mask, h, w)
                return
            if tg.pred and accepted:
                prepare_instances(store, [i.mask for i in accepted], h, w, outlines=tg.outlines,
                                  opacity=tg.pred_opacity)
            if tg.gt and gts:
                prepare_ground_truth(store, gts[0], tg)

        items.append((ref, prepare))
    return items


def prepare_ground_truth(store: Any, mask: np.ndarray, tg: LayerToggles) -> None:
    """The "gt" layer of ``mask`` (the first ground truth, filled and outlined) as ``build_layers``
    makes it: the label map of its box and its image for the ground truth's colour and opacity."""
    box = store.box(mask)
    if box is None:
        return
    (sub,) = crop([mask], box)
    labels, table = ground_truth_labels(sub, tg), ground_truth_table(tg)
    image = indexed_image(labels, table).convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    store.prepared.put("gt", (mask,), box, tg.outlines, Prepared(labels, tuple(table), image))
