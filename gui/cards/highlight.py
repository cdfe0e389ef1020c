"""Highlight one predicted instance on the canvas that shows its prompt (a card's hover).

The highlight is one more overlay layer (``HIGHLIGHT_LAYER``) above the others: a thick white
outline over a light fill, drawn even for an instance below t (which the prediction layer hides),
so a rejected instance that decided a verdict can be seen too. The next render drops it.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from masklens.core.masks import Mask
from masklens.gui.canvas.overlays import bbox, crop, layer_labels, layer_table, to_pixmap
from masklens.gui.canvas.sample_view import SampleViewWidget

HIGHLIGHT_LAYER = "highlight"
HIGHLIGHT_COLOUR = "#FFFFFF"


def clear_highlight(views: Iterable[SampleViewWidget]) -> None:
    for view in views:
        for panel in view.panels:
            panel.canvas.set_layer(HIGHLIGHT_LAYER, None)


def show_highlight(views: Iterable[SampleViewWidget], prompt_id: str, mask: Mask | None) -> int:
    """Outline ``mask`` on every panel drawing ``prompt_id`` (the others are cleared); returns how
    many panels show it."""
    views = list(views)
    clear_highlight(views)
    if mask is None:
        return 0
    shown = 0
    for view in views:
        for panel, spec in zip(view.panels, view.specs, strict=False):
            if spec.prompt_id != prompt_id:
                continue
            rect = panel.canvas.sceneRect()
            h, w = int(rect.height()), int(rect.width())
            if h <= 0 or w <= 0:
                continue
            arr = np.ascontiguousarray(mask.resized(h, w).to_array(), dtype=bool)
            box = bbox(arr)
            if box is None:
                continue
            (sub,) = crop([arr], box)
            labels = layer_labels(sub.copy(), True, 3)
            panel.canvas.set_layer(HIGHLIGHT_LAYER, to_pixmap(labels, layer_table(HIGHLIGHT_COLOUR, 0.3)),
                                   z=50, pos=box[:2])
            shown += 1
    return shown
