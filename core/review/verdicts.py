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
