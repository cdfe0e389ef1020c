"""The mutation fuzzer, fixed-seed subset: every mutation class once per demo kind through
`masklens score KIND …`, and once through `masklens report` (kinds in turn), each as a real
subprocess under a memory cap and a time limit. Any traceback, signal, hang, unclean exit,
lost previous output or wrongly typed id taken as valid fails. `make fuzz` runs the full set
(tests/fuzz/run_fuzz.py) whose table is in docs/reliability.md."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from fuzz_cases import KINDS, make_workspace
from fuzz_runner import FAILING, Outcome, classify, mutation_classes, run_cli, run_many

SEED = 2026
SUBSET_BIG_MB = 4
#: "read outside root" (../, absolute paths, symlinks leaving their root) is the guarded path
#: resolver's job (core/files/paths.py, branch paths-sqlite, merged): the test fails on it. Setting
#: MASKLENS_FUZZ_ROOT_GUARD=0 turns it back into an expected failure (a branch without it).
ROOT_GUARD_MERGED = os.environ.get("MASKLENS_FUZZ_ROOT_GUARD", "1") == "1"


def _plan() -> list[tuple[str, str, int]]:
    jobs = [(k, "score", i) for k in KINDS for i in range(len(mutation_classes(k, "score", big_mb=1)))]
    n_report = max(len(mutation_classes(k, "report", big_mb=1)) for k in KINDS)
    jobs += [(KINDS[i % len(KINDS)], "report", i) for i in range(n_report)]
    return jobs


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    return run_many(_plan(), seed=SEED, big_mb=SUBSET_BIG_MB)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["score", "report"])
@pytest.mark.parametrize("kind", KINDS)
def test_no_traceback_signal_hang_or_lost_output(outcomes, kind, command):
    mine = [o for o in outcomes if o.kind == kind and o.command == command]
    assert mine, "the plan ran nothing for this kind"
    bad = [o.line() for o in mine if o.outcome in FAILING]
    assert not bad, "\n\n".join(bad)


@pytest.mark.slow
def test_every_run_is_classified_and_most_mutations_are_refused(outcomes):
    """The subset exercised the loaders: most hostile inputs end in a clean error, some stay valid."""
    counts = {o.outcome for o in outcomes}
    assert "clean error" in counts and "valid" in counts
    assert sum(o.outcome == "clean error" for o in outcomes) > len(outcomes) // 2


@pytest.mark.slow
@pytest.mark.xfail(not ROOT_GUARD_MERGED, reason="paths outside their root: guarded resolver (paths-sqlite)",
                   strict=False)
def test_no_read_outside_root(outcomes):
    bad = [o.line() for o in outcomes if o.outcome == "outside root"]
    assert not bad, "\n\n".join(bad)


# ------------------------------------------------------------ the harness itself can fail
PY = [sys.executable, "-c"]


@pytest.mark.parametrize(("code", "expected"), [
    ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "signal"),
    ("import time; time.sleep(30)", "hang"),
    ("raise ValueError('boom')", "traceback"),
    ("bytearray(8 << 30)", "traceback"),  # the memory cap applies: MemoryError, not the OOM killer
    ("import sys; print('masklens: error: x', file=sys.stderr); sys.exit(2)", "clean error"),
    ("import sys; sys.exit(3)", "other"),
])
def test_harness_classifies_each_outcome(tmp_path, code, expected):
    ws = make_workspace(tmp_path, "cafe")
    rc, err = run_cli([], timeout=2 if expected == "hang" else 30, program=[*PY, code])
    assert classify(rc, err, ws) == expected


def test_harness_sees_a_lost_previous_output(tmp_path):
    ws = make_workspace(tmp_path, "cafe")
    ws.out.write_text("half")
    assert classify(2, "masklens: error: x", ws) == "lost output"
    ws.out.write_bytes(Path(ws.out).read_bytes())
    (ws.base / ".out.json.123.tmp").write_text("")
    assert classify(2, "masklens: error: x", ws) == "lost output"
