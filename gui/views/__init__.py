"""Per-benchmark sample views: which panels (image, prompt, ground truths) a sample shows.

A view is a small class, a plug-in named after its kind (entry-point group
``masklens.gui.views``, :mod:`masklens.core.plugins`); the generic renderer
(:mod:`masklens.gui.canvas.sample_view`) draws its panels with synchronised pan/zoom.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from masklens.core import plugins
from masklens.core.plugins import Plugins
from masklens.core.schema import Prompt, Sample


@dataclass
class PanelSpec:
    """One canvas: an image, the prompt whose prediction is drawn, and ground truths.

    ``gts[0]`` is the ground truth the prompt is scored against (filled, and used by the
    TP/FP/FN error view); further keys are drawn as outlines (e.g. R2SM's other mask).
    """

    title: str
    image: str
    prompt_id: str | None = None
    gts: list[str] = field(default_factory=list)


class SampleView:
    """Default view: one panel per prompt (at most ``max_panels``), in benchmark order."""

    columns = 3
    max_panels = 6
    score_labels = True  # label each drawn instance with its score

    def prompts(self, sample: Sample) -> list[Prompt]:
        return list(sample.prompts)

    def panels(self, sample: Sample) -> list[PanelSpec]:
        out = []
        for p in self.prompts(sample)[: self.max_panels]:
            out.append(PanelSpec(title=prompt_title(p, sample), image=p.image, prompt_id=p.id,
                                 gts=self.gts_for(sample, p)))
        if not out:
            for key in list(sample.images)[: self.max_panels]:
                out.append(PanelSpec(title=key, image=key, gts=list(sample.gts)[:1]))
        return out

    def gts_for(self, sample: Sample, prompt: Prompt) -> list[str]:
        return [prompt.gt] if prompt.gt in sample.gts else []

    def grid_columns(self, n_panels: int) -> int:
        return max(1, min(self.columns, n_panels))

    def caption(self, sample: Sample, prompt: Prompt, readout: Mapping[str, Any]) -> str | None:
        """The benchmark's own words for this prompt's panel (None: the generic IoU caption)."""
        return None

    def caption_at(self, sample: Sample, prompt: Prompt, readout: Mapping[str, Any],
                   params: Mapping[str, float]) -> str | None:
        """The caption at the scoring parameters ``params`` (e.g. ``score_threshold``): a view
        whose words depend on them (what is drawn at t) overrides this; by default :meth:`caption`."""
        return self.caption(sample, prompt, readout)

    def safe_caption(self, sample: Sample, prompt: Prompt, readout: Mapping[str, Any] | None,
                     params: Mapping[str, float] | None = None) -> str | None:
        if readout is None:
            return None
        try:
            return self.caption_at(sample, prompt, readout, params or {})
        except (KeyError, TypeError, ValueError, IndexError):  # a readout without these fields
            return None


def prompt_title(p: Prompt, sample: Sample) -> str:
    role = p.role.value if p.level is None or p.role.value != "hypernym" else f"hypernym p{p.level}"
    where = f" · on {p.image}" if len(sample.images) > 1 else ""
    return f"{role}: “{p.text}”{where}"


def _view(name: str, obj: object) -> type[SampleView]:
    if not (isinstance(obj, type) and issubclass(obj, SampleView)):
        raise TypeError(f"sample view '{name}' is not a subclass of SampleView")
    return obj


#: each kind's view: entry points of ``masklens.gui.views`` (the kind's name -> a SampleView
#: subclass), masklens' own included; a kind without one gets the default view
VIEWS: Plugins[type[SampleView]] = Plugins(plugins.VIEWS, "sample view", _view)


def register_view(kind: str) -> Callable[[type[SampleView]], type[SampleView]]:
    """Class decorator: use this view for benchmark kind ``kind`` in this process; an installed
    package declares an entry point in ``masklens.gui.views`` instead."""

    def deco(cls: type[SampleView]) -> type[SampleView]:
        VIEWS.add(kind, cls)
        return cls

    return deco


def view_for(kind: str | None) -> SampleView:
    """A new view of ``kind`` (the default view when it has none, or a broken one)."""
    cls = VIEWS.available().get(kind) if kind and kind in VIEWS else None
    return (cls or SampleView)()
