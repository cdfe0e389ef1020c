"""`masklens review export|merge|agreement|summary|check DB …`: reviewers' verdicts outside the GUI
(`apply`, `assign`, `queue`: core/cli/review_team.py)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from masklens.core.errors import MasklensError

if TYPE_CHECKING:
    from masklens.core.review.corrections import Correction
    from masklens.core.review.verdicts import Verdict


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("review", help="reviewers' verdicts and ground-truth corrections: export, merge, compare, apply, assign")
    acts = parser.add_subparsers(dest="review_command", metavar="ACTION")
    acts.required = True
    e = acts.add_parser("export", help="write the verdicts as CSV or JSON (by the file suffix)")
    e.add_argument("db", help="review database (.sqlite)")
    e.add_argument("--out", required=True, help="FILE.csv or FILE.json")
    e.add_argument("--benchmark", help="only this benchmark key (kind:name)")
    e.add_argument("--history", action="store_true", help="every recorded row, not just the current")
    e.set_defaults(func=_export)
    m = acts.add_parser("merge", help="merge other reviewers' databases into DB (idempotent); "
                        "exit 1 when two reviewers corrected an instance differently")
    m.add_argument("db", help="target database (created when missing)")
    m.add_argument("others", nargs="+", help="databases to merge in")
    m.set_defaults(func=_merge)
    a = acts.add_parser("agreement", help="Cohen's κ per pair of reviewers and Fleiss' κ")
    a.add_argument("db", nargs="+", help="one merged database or several reviewers' databases")
    a.add_argument("--benchmark", help="only this benchmark key (kind:name)")
    a.add_argument("--json", action="store_true", help="print JSON")
    a.set_defaults(func=_agreement)
    s = acts.add_parser("summary", help="verdict counts per benchmark and reviewer")
    s.add_argument("db")
    s.set_defaults(func=_summary)
    c = acts.add_parser("check", help="check a review database for damage (SQLite integrity_check "
                        "and the verdicts table); changes nothing; exit 1 when damaged")
    c.add_argument("db", nargs="+")
    c.set_defaults(func=_check)
    from masklens.core.cli import review_team

    review_team.register(acts)


def _open(path: str):

    from masklens.core.review.store import Role, open_store

    # missing, 0-byte or foreign files are errors; the file is never changed (no upgrade, no WAL)
    return open_store(path, Role.READ)


def _export(args: argparse.Namespace) -> int:
    with _open(args.db) as st:
        out = st.export(args.out, benchmark=args.benchmark, history=args.history)
    print(f"wrote {out}", file=sys.stderr)
    return 0


def _merge(args: argparse.Namespace) -> int:
    from masklens.core.files.output_dirs import refuse_inputs
    from masklens.core.review.corrections import correction_conflicts
    from masklens.core.review.store import Role, open_store

    refuse_inputs(args.db, args.others, flag="DB")  # merging a store into itself, or into its folder
    for o in args.others:
        _open(o).close()  # a missing or empty file is an error, not a new empty store
    with open_store(args.db, Role.WRITE) as st:
        added = st.merge(*args.others)
        total = len(st.history()) + len(st.correction_history())
        conflicts = correction_conflicts(st.corrections())
    print(f"merged {added} new verdict and correction row(s) into {args.db} ({total} in all)",
          file=sys.stderr)
    for other, n in st.merge_skipped.items():
        print(f"masklens: warning: {other}: {n} row(s) not merged: a required field (benchmark, "
              "sample, verdict, reviewer, time …) is empty", file=sys.stderr)
    for c in conflicts:
        print(f"conflict: {c.benchmark}: {c.describe()}")
    if conflicts:
        print(f"masklens: {len(conflicts)} instance(s) corrected differently by several reviewers "
              "(kept, none chosen): settle them before `masklens review apply`, or apply one "
              "reviewer's with --reviewer", file=sys.stderr)
    return 1 if conflicts else 0


def _agreement(args: argparse.Namespace) -> int:
    from masklens.core.review.agreement import agreement
    from masklens.core.review.corrections import correction_conflicts
    from masklens.core.scoring.tables import format_table

    verdicts: list[Verdict] = []
    seen: set[str] = set()
    fixes: dict[str, Correction] = {}
    for db in args.db:
        with _open(db) as st:
            for v in st.current(args.benchmark):
                if v.uid not in seen:
                    seen.add(v.uid)
                    verdicts.append(v)
            for c in st.correction_history(args.benchmark):
                fixes.setdefault(c.uid, c)
    ag = agreement(verdicts)
    differ = correction_conflicts(sorted(fixes.values(), key=lambda c: c.time))
    if args.json:
        out = ag.to_json()
        out["corrections_differ"] = [
            {"benchmark": c.benchmark, "sample_id": c.sample_id, "gt_key": c.gt_key,
             "instance": c.instance, "reviewers": c.reviewers} for c in differ]
        print(json.dumps(out, indent=2))
        return 0
    if len(ag.reviewers) < 2:
        raise MasklensError(f"agreement needs two reviewers; found {len(ag.reviewers)}",
                            hint="merge the reviewers' databases or pass them all")
    print(f"reviewers: {', '.join(ag.reviewers)}; items rated: {ag.items_total}; "
          f"rated by all: {ag.items_complete}")
    print(f"Fleiss' kappa: {_f(ag.fleiss)}   observed agreement: {_f(ag.observed)}")
    print(format_table(["pair", "items", "Cohen's kappa"],
                       [[f"{p['a']} / {p['b']}", p["items"], p["cohen_kappa"]] for p in ag.pairs]))
    print(f"ground-truth instances corrected differently: {len(differ)}")
    for c in differ:
        print(f"  {c.benchmark}: {c.describe()}")
    return 0


def _summary(args: argparse.Namespace) -> int:
    from collections import Counter

    from masklens.core.scoring.tables import format_table

    with _open(args.db) as st:
        c = Counter((v.benchmark, v.reviewer, v.verdict) for v in st.current())
    rows = [[b, r, v, n] for (b, r, v), n in sorted(c.items())]
    print(format_table(["benchmark", "reviewer", "verdict", "count"], rows))
    return 0


def _check(args: argparse.Namespace) -> int:
    from masklens.core.review.check import check_review_db
    from masklens.core.review.migrations import SCHEMA_VERSION

    damaged = newer = 0
    for db in args.db:
        res = check_review_db(db)
        if res.ok:
            print(f"{db}: ok (schema version {res.schema_version}, {res.rows} verdict rows)")
            continue
        if res.newer:
            newer += 1
            print(f"{db}: made by a newer masklens (schema version {res.schema_version}; this "
                  f"masklens reads up to {SCHEMA_VERSION}): not checked; upgrade masklens to read it")
            continue
        damaged += 1
        print(f"{db}: DAMAGED")
        for problem in res.problems:
            print(f"  {problem}")
    if damaged:
        print("masklens: a damaged review database can often be rescued with "
              "`sqlite3 FILE .recover | sqlite3 NEW.sqlite`; keep the original", file=sys.stderr)
    return 1 if damaged or newer else 0


def _f(v: float | None) -> str:
    return "undefined" if v is None else f"{v:.4f}"
