"""The built-in per-benchmark views (CAFE, HalluSegBench, CGEBench, R2SM)."""

from __future__ import annotations

from masklens.core.readout import implied_gt
from masklens.core.schema import Prompt, Role, Sample
from masklens.gui.views import SampleView, register_view

_ROLE_ORDER = {r: i for i, r in enumerate(Role)}


@register_view("cafe")
class CafeView(SampleView):
    """Positive | negative prompt results side by side, both against the positive target."""

    columns = 2

    def prompts(self, sample: Sample) -> list[Prompt]:
        return sorted(sample.prompts, key=lambda p: _ROLE_ORDER[p.role])


@register_view("hallusegbench")
class HalluView(SampleView):
    """Factual | counterfactual image side by side; rows: the positive then the negative query."""

    columns = 2
    max_panels = 4

    def prompts(self, sample: Sample) -> list[Prompt]:
        images = list(sample.images)
        return sorted(
            sample.prompts,
            key=lambda p: (_ROLE_ORDER[p.role], images.index(p.image) if p.image in images else 9),
        )


@register_view("cgebench")
class CgeView(SampleView):
    """The hierarchy as a strip: p_base, p1, p2, p3, each with G and its mask M(p_k)."""

    columns = 4
    max_panels = 4

    def prompts(self, sample: Sample) -> list[Prompt]:
        return sorted(sample.prompts, key=lambda p: p.level or 0)


@register_view("r2sm")
class R2smView(SampleView):
    """Each query with the requested mask filled and the other (modal ↔ amodal) outlined."""

    columns = 3

    def gts_for(self, sample: Sample, prompt: Prompt) -> list[str]:
        keys = super().gts_for(sample, prompt)
        other = {Role.MODAL: Role.AMODAL, Role.AMODAL: Role.MODAL}.get(prompt.role)
        if other is not None:
            gt = implied_gt(sample, other, image=prompt.image)
            if gt is not None and gt.key not in keys:
                keys.append(gt.key)
        return keys


@register_view("ovs")
class OvsView(SampleView):
    """One panel per vocabulary entry; its per-threshold masks drawn nested (no score labels)."""

    score_labels = False
