"""One reviewer's verdict row, the store's columns, and the reading rules every consumer shares
(retractions taken out, WHERE clauses)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """One recorded verdict. ``prompt_id`` is "" for a verdict on the whole sample;
    ``verdict`` is "" for a cleared verdict; ``time`` is ISO 8601 UTC."""

    benchmark: str
    sample_id: str
    prompt_id: str
    verdict: str
    note: str
    reviewer: str
    time: str
    uid: str
    #: uid of the row this one retracts (an undo); "" for an ordinary verdict
    retracts: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.benchmark, self.sample_id, self.prompt_id, self.reviewer)


FIELDS = ("benchmark", "sample_id", "prompt_id", "verdict", "note", "reviewer", "time", "uid", "retracts")


def effective(rows: Iterable[Verdict]) -> list[Verdict]:
    """``rows`` without retraction rows and the rows they retract (order kept)."""
    rows = list(rows)
    retracted = {v.retracts for v in rows if v.retracts}
    return [v for v in rows if not v.retracts and v.uid not in retracted]


def where(**conds: str | None) -> tuple[str, tuple[str, ...]]:
    parts = [(f"{k} = ?", v) for k, v in conds.items() if v is not None]
    if not parts:
        return "", ()
    return "WHERE " + " AND ".join(p for p, _ in parts), tuple(v for _, v in parts)


def whose_verdicts(current: Iterable[Verdict], reviewer: str) -> tuple[dict[str, str], dict[str, str]]:
    """Current verdicts (``ReviewStore.current`` / ``sample_current``) split by whose they are:
    sample id → ``reviewer``'s verdict keys (``"fine, gt_wrong"``; what "reviewed" means for
    this reviewer), and sample id → the other reviewers' (``"ben: fine; eve: gt_wrong"``,
    reviewers in name order). A sample without a verdict of that side is absent."""
    mine: dict[str, set[str]] = {}
    theirs: dict[str, dict[str, set[str]]] = {}
    for v in current:
        if not v.verdict:
            continue
        if v.reviewer == reviewer:
            mine.setdefault(v.sample_id, set()).add(v.verdict)
        else:
            theirs.setdefault(v.sample_id, {}).setdefault(v.reviewer, set()).add(v.verdict)
    return ({sid: ", ".join(sorted(keys)) for sid, keys in mine.items()},
            {sid: "; ".join(f"{who}: {', '.join(sorted(keys))}" for who, keys in sorted(per.items()))
             for sid, per in theirs.items()})
