"""Readouts for prompts a user types (Qt-free; used by the GUI's prompt bar).

A typed prompt has a role (and, for hypernyms, a level). The role fixes the ground
truth it is scored against: the benchmark prompt of the same role (and level) on
the same image supplies it; failing that, :data:`ROLE_FALLBACK` says which role's
ground truth stands in (a negative prompt is scored against the positive target,
a hypernym against G, …).

Two readouts:

* :func:`generic_readout` — IoU of the union of accepted instances (s ≥ t) with the
  implied ground truth, and each instance's IoU and score;
* :func:`benchmark_readout` — the benchmark's own per-sample record for a copy of the
  sample in which the typed prompt replaces the benchmark prompt of the same role
  (and level), scored with the kind's ``sample_overlaps``/``sample_readout``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from masklens.core.masks import iou_matrix, union_all
from masklens.core.schema import GroundTruth, Prediction, PredictionSet, Prompt, Role, Sample

#: when a sample has no benchmark prompt of a role, whose ground truth a typed prompt of that
#: role is scored against (in order of preference)
ROLE_FALLBACK: dict[Role, tuple[Role, ...]] = {
    Role.POSITIVE: (Role.HYPERNYM, Role.MODAL, Role.VOCABULARY),
    Role.NEGATIVE: (Role.POSITIVE, Role.HYPERNYM, Role.MODAL),
    Role.HYPERNYM: (Role.POSITIVE,),
    Role.MODAL: (Role.POSITIVE,),
    Role.AMODAL: (Role.POSITIVE,),
    Role.VOCABULARY: (Role.POSITIVE,),
}

#: ground-truth keys that name a role's mask even without a prompt of that role (R2SM style)
_GT_KEY_HINTS: dict[Role, tuple[str, ...]] = {
    Role.AMODAL: ("amodal",),
    Role.MODAL: ("modal",),
}


def _matches(p: Prompt, role: Role, level: int | None, image: str | None) -> bool:
    if p.role != role:
        return False
    if role == Role.HYPERNYM and level is not None and p.level != level:
        return False
    return image is None or p.image == image


def replaced_prompt(
    sample: Sample, role: Role | str, level: int | None = None, image: str | None = None,
    *, text: str | None = None, prompt_id: str | None = None,
) -> Prompt | None:
    """The benchmark prompt a typed prompt of ``role`` (``level``, on ``image``) replaces: the one
    named by ``prompt_id`` if it has that role, else the one with the same ``text``, else the first
    (several prompts of one role: R2SM's queries, an OVS vocabulary)."""
    role = Role(role)
    for img in (image, None) if image is not None else (None,):
        found = [p for p in sample.prompts if _matches(p, role, level, img)]
        if found:
            for p in found:
                if prompt_id is not None and p.id == prompt_id:
                    return p
            for p in found:
                if text is not None and p.text.strip().lower() == text.strip().lower():
                    return p
            return found[0]
    return None


def implied_gt(
    sample: Sample, role: Role | str, level: int | None = None, image: str | None = None
) -> GroundTruth | None:
    """The ground truth a typed prompt of ``role`` is scored against, or None when there is none."""
    role = Role(role)
    same = replaced_prompt(sample, role, level, image)
    if same is not None and same.gt in sample.gts:
        return sample.gts[same.gt]
    for hint in _GT_KEY_HINTS.get(role, ()):
        for key, gt in sample.gts.items():
            low = key.lower()
            if hint in low and not (hint == "modal" and "amodal" in low):
                return gt
    for other in ROLE_FALLBACK.get(role, ()):
        p = replaced_prompt(sample, other, None, image)
        if p is not None and p.gt in sample.gts:
            return sample.gts[p.gt]
    return next(iter(sample.gts.values()), None)


def make_typed_prompt(
    sample: Sample,
    text: str,
    role: Role | str,
    *,
    level: int | None = None,
    image: str | None = None,
    prompt_id: str | None = None,
    replaces: str | None = None,
) -> Prompt:
    """A prompt of the current sample for ``text``: image and ground truth implied by the role
    (and by the benchmark prompt it replaces: ``replaces`` names it, else the same text, else the
    first of that role)."""
    role = Role(role)
    base = replaced_prompt(sample, role, level, image, text=text, prompt_id=replaces)
    gt = sample.gts[base.gt] if base is not None and base.gt in sample.gts else implied_gt(sample, role, level, image)
    img = image or (base.image if base else next(iter(sample.images), ""))
    return Prompt(
        id=prompt_id or f"typed:{role.value}:{level if level is not None else ''}:{text}",
        text=text,
        role=role,
        image=img,
        gt=gt.key if gt is not None else None,
        level=level if role == Role.HYPERNYM else (base.level if base else None),
        meta={"typed": True, "replaces": base.id if base is not None else None},
    )


def generic_readout(
    sample: Sample, prompt: Prompt, prediction: Prediction, score_threshold: float
) -> dict[str, Any]:
    """IoU of the union of instances with s ≥ t against the implied ground truth, and per instance."""
    gt = sample.gts.get(prompt.gt) if prompt.gt else None
    out: dict[str, Any] = {
        "prompt": prompt.text,
        "role": prompt.role.value,
        "gt": prompt.gt,
        "score_threshold": score_threshold,
        "n_instances": len(prediction.instances),
        "max_score": prediction.max_score,
        "presence": prediction.presence,
    }
    if gt is None:
        out.update(iou=None, n_accepted=sum(i.score >= score_threshold for i in prediction.instances))
        out["instances"] = [{"score": i.score, "iou": None} for i in prediction.instances]
        return out
    target = gt.union()
    masks = [i.mask.resized(gt.height, gt.width) for i in prediction.instances]
    ious: Iterable[float] = iou_matrix(masks, [target])[:, 0] if masks else []
    accepted = [m for m, i in zip(masks, prediction.instances, strict=True) if i.score >= score_threshold]
    union = union_all(accepted, gt.height, gt.width)
    u_iou = float(iou_matrix([union], [target])[0, 0])  # 0 when both are empty
    out.update(
        iou=u_iou,
        n_accepted=len(accepted),
        gt_area=target.area,
        pred_area=union.area,
        instances=[
            {"score": float(i.score), "iou": float(v), "accepted": i.score >= score_threshold}
            for i, v in zip(prediction.instances, ious, strict=True)
        ],
    )
    return out


def substitute(
    sample: Sample,
    prompt: Prompt,
    prediction: Prediction,
    base: PredictionSet | None = None,
) -> tuple[Sample, PredictionSet, str] | None:
    """A copy of ``sample`` whose benchmark prompt of ``prompt``'s role/level/image has the typed
    text, with a prediction set answering it by ``prediction``; None when no prompt is replaced."""
    replaced = replaced_prompt(sample, prompt.role, prompt.level, prompt.image, text=prompt.text,
                               prompt_id=prompt.meta.get("replaces"))
    if replaced is None:
        return None
    new_prompt = dataclasses.replace(replaced, text=prompt.text, meta={**replaced.meta, "typed": True})
    prompts = [new_prompt if p.id == replaced.id else p for p in sample.prompts]
    copy = dataclasses.replace(sample, prompts=prompts)
    preds = PredictionSet(name="typed")
    if base is not None:
        for p in sample.prompts:
            got = base.get(p.id)
            if got is not None:
                preds.by_prompt[p.id] = got
            elif p.id in base.missing:
                preds.missing.add(p.id)
    else:
        preds.missing.update(p.id for p in sample.prompts)
    preds.add(dataclasses.replace(prediction, prompt_id=replaced.id))
    return copy, preds, replaced.id


def benchmark_overlaps(
    kind: Any, sample: Sample, prompt: Prompt, prediction: Prediction, base: PredictionSet | None = None
) -> tuple[Sample, Any] | None:
    """Stage 1 for a typed prompt: the substituted sample and its threshold-free overlaps
    (the only step that touches masks); None when the sample has no prompt of that role."""
    sub = substitute(sample, prompt, prediction, base)
    if sub is None:
        return None
    copy, preds, _ = sub
    return copy, kind.sample_overlaps(copy, preds)


def benchmark_readout(
    kind: Any,
    sample: Sample,
    prompt: Prompt,
    prediction: Prediction,
    params: Mapping[str, float],
    base: PredictionSet | None = None,
    *,
    cached: tuple[Sample, Any] | None = None,
) -> dict[str, Any] | None:
    """The kind's per-sample record with the typed prompt in place of the benchmark's prompt of the
    same role (and level); the other prompts keep their predictions from ``base``. None when the
    sample has no prompt of that role. ``cached`` (from :func:`benchmark_overlaps`) skips stage 1,
    so new parameters re-derive the record without touching masks."""
    staged = cached if cached is not None else benchmark_overlaps(kind, sample, prompt, prediction, base)
    if staged is None:
        return None
    copy, overlaps = staged
    return kind.sample_readout(copy, overlaps, kind.resolve_params(params))
