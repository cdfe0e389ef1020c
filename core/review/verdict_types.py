"""The verdict types a reviewer can record (key stored in the review store, label, one-key
shortcut, whether reports drop the sample when recomputing metrics): a registry, fixed by
default and extensible with :func:`register_verdict_type`. Qt-free."""

from __future__ import annotations

from dataclasses import dataclass

from masklens.core.errors import MasklensError


@dataclass(frozen=True)
class VerdictType:
    """One entry of the verdict list: key stored in the DB, label, one-key shortcut."""

    key: str
    label: str
    shortcut: str
    #: samples with this verdict are taken out when metrics are recomputed in reports
    excludes_sample: bool = False
    description: str = ""


VERDICT_TYPES: dict[str, VerdictType] = {}


def register_verdict_type(vt: VerdictType) -> None:
    """Add a verdict type (the list is fixed by default and extensible here)."""
    for other in VERDICT_TYPES.values():
        if other.key != vt.key and other.shortcut.lower() == vt.shortcut.lower():
            raise ValueError(f"shortcut '{vt.shortcut}' already used by '{other.key}'")
    VERDICT_TYPES[vt.key] = vt


# one-key shortcuts avoid the canvas keys (G, R, E, O, S, F, 1) and N (next unreviewed)
for _vt in (
    VerdictType("model_wrong", "Model wrong", "M", description="the model's answer is wrong"),
    VerdictType(
        "gt_wrong", "Ground truth wrong", "W", True, "the benchmark's mask or label is wrong"
    ),
    VerdictType(
        "prompt_ambiguous", "Prompt ambiguous", "A", description="the prompt admits several readings"
    ),
    VerdictType(
        "edit_invalid",
        "Edit invalid",
        "I",
        True,
        "the counterfactual does not show what it claims",
    ),
    VerdictType("fine", "Fine", "K", description="nothing wrong here"),
):
    register_verdict_type(_vt)


def verdict_type(key: str) -> VerdictType:
    try:
        return VERDICT_TYPES[key]
    except KeyError:
        raise MasklensError(
            f"unknown verdict '{key}'", hint=f"known verdicts: {', '.join(VERDICT_TYPES)}"
        ) from None


def excluding_verdicts() -> set[str]:
    """Verdict keys whose samples reports drop when recomputing metrics."""
    return {k for k, v in VERDICT_TYPES.items() if v.excludes_sample}
