"""The built-in per-benchmark views (CAFE, HalluSegBench, CGEBench, R2SM)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from masklens.core.schema import Prompt, Role, Sample
from masklens.core.scoring.readout import implied_gt
from masklens.gui.figures import instance_note, owners
from masklens.gui.views import SampleView

_ROLE_ORDER = {r: i for i, r in enumerate(Role)}


class CafeView(SampleView):
    """Positive | negative prompt results side by side, both against the positive target."""

    columns = 2

    def prompts(self, sample: Sample) -> list[Prompt]:
        return sorted(sample.prompts, key=lambda p: _ROLE_ORDER[p.role])

    def caption(self, sample: Sample, prompt: Prompt, readout: Mapping[str, Any]) -> str | None:
        return self.caption_at(sample, prompt, readout, {})

    def caption_at(self, sample: Sample, prompt: Prompt, readout: Mapping[str, Any],
                   params: Mapping[str, float]) -> str | None:
        side = {Role.POSITIVE: "pos", Role.NEGATIVE: "neg"}.get(prompt.role)
        if side is None:
            return None
        instances = readout.get(f"{side}_instances") or []
        by_s, by_iou = owners(instances)
        t = params.get("score_threshold")  # not given: no instance is said to be below it
        owner = instance_note(by_iou, by_s, instances, float("-inf") if t is None else t, of_score=False, gap=" ")
        return (f"{readout[f'{side}_class']} · max s {_f(readout[f'{side}_max_score'], 2)}"
                f" · max IoU {_f(readout[f'{side}_max_iou'])}{owner}"
                + (" · swap" if readout.get("SoftSwap") else ""))


def _f(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


_HALLU_KEYS = {  # (role, image) -> the readout fields of that query
    (Role.POSITIVE, "factual"): ("IoU_fact",),
    (Role.NEGATIVE, "factual"): ("IoU_textual", "CMS_fact"),
    (Role.NEGATIVE, "counterfactual"): ("IoU_visual", "CMS_counterfact"),
    (Role.POSITIVE, "counterfactual"): ("IoU_counterfact",),
}


class HalluView(SampleView):
    """Factual | counterfactual image side by side; rows: the positive then the negative query."""

    columns = 2
    max_panels = 4

    def caption(self, sample: Sample, prompt: Prompt, readout: Mapping[str, Any]) -> str | None:
        keys = _HALLU_KEYS.get((prompt.role, prompt.image))
        return None if keys is None else " · ".join(f"{k} {_f(readout[k])}" for k in keys)

    def prompts(self, sample: Sample) -> list[Prompt]:
        images = list(sample.images)
        return sorted(
            sample.prompts,
            key=lambda p: (_ROLE_ORDER[p.role], images.index(p.image) if p.image in images else 9),
        )


class CgeView(SampleView):
    """The hierarchy as a strip: p_base, p1, p2, p3, each with G and its mask M(p_k)."""

    columns = 4
    max_panels = 4

    def prompts(self, sample: Sample) -> list[Prompt]:
        return sorted(sample.prompts, key=lambda p: p.level or 0)

    def caption(self, sample: Sample, prompt: Prompt, readout: Mapping[str, Any]) -> str | None:
        lv = next(v for v in readout["levels"] if v["prompt_id"] == prompt.id)
        return (f"IoGT {_f(lv['IoGT'])} · c({lv['level']}) {_f(lv['cumulative'])} · {lv['outcome']}"
                f" · kept {lv['kept']}/{lv['instances']}")


class R2smView(SampleView):
    """Each query with the requested mask filled and the other (modal ↔ amodal) outlined."""

    columns = 3

    def caption(self, sample: Sample, prompt: Prompt, readout: Mapping[str, Any]) -> str | None:
        q = next(v for v in readout["queries"] if v["prompt_id"] == prompt.id)
        other = "modal" if q["requested"] == "amodal" else "amodal"
        return (f"IoU {_f(q['IoU'])} vs {q['requested']} · {_f(q['IoU_other'])} vs {other}"
                + (" · WRONG TYPE" if q["wrong_type"] else ""))

    def gts_for(self, sample: Sample, prompt: Prompt) -> list[str]:
        """The requested mask, then the other mask type of the same object (the query's own
        ``other_gt``; a prompt without one falls back to the ground truth its role implies)."""
        keys = super().gts_for(sample, prompt)
        own = prompt.meta.get("other_gt") if isinstance(prompt.meta, Mapping) else None
        if own in sample.gts:
            if own not in keys:
                keys.append(own)
            return keys
        other = {Role.MODAL: Role.AMODAL, Role.AMODAL: Role.MODAL}.get(prompt.role)
        if other is not None:
            gt = implied_gt(sample, other, image=prompt.image)
            if gt is not None and gt.key not in keys:
                keys.append(gt.key)
        return keys


class OvsView(SampleView):
    """One panel per vocabulary entry; its per-threshold masks drawn nested (no score labels)."""

    score_labels = False
