"""The verdict types a reviewer can record (key stored in the review store, label, one-key
shortcut, whether reports drop the sample when recomputing metrics): masklens' own and those of
installed plug-ins (:class:`VerdictTypes`). Qt-free."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
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


class VerdictTypes(Mapping[str, VerdictType]):
    """Every verdict type by key, in display order: masklens' own first, then each installed
    package's (entry-point group ``masklens.verdict_types``, :mod:`masklens.core.plugins`; an
    entry point names one VerdictType or a sequence of them), then those registered at run time.
    Loaded on first use; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._types: dict[str, VerdictType] | None = None

    def _loaded(self) -> dict[str, VerdictType]:
        with self._lock:
            if self._types is None:
                self._types = {}
                for vt in _installed():
                    self._add(vt)
            return self._types

    def _add(self, vt: VerdictType) -> None:
        types = self._types if self._types is not None else self._loaded()
        for other in types.values():
            if other.key != vt.key and other.shortcut.lower() == vt.shortcut.lower():
                raise ValueError(f"shortcut '{vt.shortcut}' already used by '{other.key}'")
        types[vt.key] = vt

    def add(self, vt: VerdictType) -> None:
        with self._lock:
            self._add(vt)

    def __getitem__(self, key: str) -> VerdictType:
        return self._loaded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._loaded()))

    def __len__(self) -> int:
        return len(self._loaded())


def _installed() -> list[VerdictType]:
    """The verdict types of every installed entry point, masklens' own first; a broken plug-in is
    left out with one warning."""
    import sys
    from importlib.metadata import entry_points

    from masklens.core import plugins

    eps = sorted(entry_points(group=plugins.VERDICT_TYPES),
                 key=lambda ep: (ep.dist is None or ep.dist.name != "masklens"))
    out: list[VerdictType] = []
    for ep in eps:
        try:
            value = ep.load()
            items = [value] if isinstance(value, VerdictType) else list(value)
            if not all(isinstance(v, VerdictType) for v in items):
                raise TypeError("not a VerdictType or a sequence of them")
        except Exception as exc:  # noqa: BLE001 - any failure of a third-party module
            print(f"masklens: warning: verdict types '{ep.name}' unavailable "
                  f"({type(exc).__name__}: {exc})", file=sys.stderr)
            continue
        out.extend(items)
    return out


VERDICT_TYPES = VerdictTypes()


def register_verdict_type(vt: VerdictType) -> None:
    """Add a verdict type in this process; an installed package declares an entry point in
    ``masklens.verdict_types`` instead."""
    VERDICT_TYPES.add(vt)


# one-key shortcuts avoid the canvas keys (G, R, E, O, S, F, 1) and N (next unreviewed)
#: masklens' own verdict types, in display order (the entry point ``masklens.verdict_types:masklens``)
BUILT_IN: tuple[VerdictType, ...] = (
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
)


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
