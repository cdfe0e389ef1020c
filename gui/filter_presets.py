"""Built-in filter presets per benchmark kind, in each benchmark's own words.

Expressions are over the flattened per-sample readout keys (see gui/filters.py); a preset
whose keys a kind's readouts do not have is not offered.
"""

from __future__ import annotations

from masklens.gui.filters import register_presets

register_presets("hallusegbench", [
    ("factual query missed (IoU_fact < 0.5)", "IoU_fact < 0.5"),
    ("hallucinated c on I' (CMS_counterfact > 0.8)", "CMS_counterfact > 0.8"),
    ("hallucinated c' on I (CMS_fact > 0.8)", "CMS_fact > 0.8"),
    ("textual ΔIoU > 0.5", "dIoU_textual > 0.5"),
    ("visual ΔIoU > 0.5", "dIoU_visual > 0.5"),
])
