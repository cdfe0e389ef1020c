"""A reviewer's process killed with SIGKILL loses no committed verdict; two writers don't corrupt."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

from masklens.core.review.store import Role, open_store

WRITER = textwrap.dedent(
    """
    import sys
    from masklens.core.review.store import Role, open_store
    st = open_store(sys.argv[1], Role.WRITE, reviewer=sys.argv[2])
    i = 0
    while True:
        v = st.record("b", f"{sys.argv[2]}-{i}", ("fine", "model_wrong")[i % 2], note="n" * 50)
        print(v.uid, flush=True)  # printed only after the commit returned
        i += 1
        if len(sys.argv) > 3 and i >= int(sys.argv[3]):
            break
    """
)


def test_sigkill_mid_review_loses_no_committed_verdict(tmp_path):
    db = tmp_path / "reviews.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), "ann"], stdout=subprocess.PIPE, text=True
    )
    committed = []
    deadline = time.monotonic() + 60
    while len(committed) < 40 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line:
            committed.append(line.strip())
    os.kill(proc.pid, signal.SIGKILL)  # in the middle of writing further verdicts
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert len(committed) >= 40
    with open_store(db, Role.WRITE) as st:
        stored = {v.uid for v in st.history()}
    assert set(committed) <= stored
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


CORRECTOR = textwrap.dedent(
    """
    import sys
    import numpy as np
    from masklens.core.masks import Mask
    from masklens.core.review.store import Role, open_store
    st = open_store(sys.argv[1], Role.WRITE, reviewer="ann")
    i = 0
    while True:
        a = np.zeros((64, 64), bool)
        a[i % 64, :] = True
        c = st.add_correction("b", f"s{i}", "gt", i % 3 or None, Mask.from_array(a),
                              tool="brush", note="n" * 50)
        print(c.uid, flush=True)  # printed only after the commit returned
        if i % 5 == 4:
            print(st.retract_correction(c).uid, flush=True)
        i += 1
    """
)


def test_sigkill_mid_correction_loses_no_acknowledged_correction(tmp_path):
    db = tmp_path / "reviews.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", CORRECTOR, str(db)], stdout=subprocess.PIPE,
                            text=True)
    acknowledged = []
    deadline = time.monotonic() + 60
    while len(acknowledged) < 48 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line:
            acknowledged.append(line.strip())
    os.kill(proc.pid, signal.SIGKILL)  # in the middle of writing further corrections
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert len(acknowledged) >= 48
    with open_store(db, Role.WRITE) as st:
        rows = st.correction_history()
        assert set(acknowledged) <= {c.uid for c in rows}
        assert all(c.mask is not None and c.mask.area == 64 for c in rows if not c.retracts)
        assert len(st.corrections("b")) == len(rows) - 2 * sum(1 for c in rows if c.retracts)
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_two_processes_write_the_same_store(tmp_path):
    db = tmp_path / "reviews.sqlite"
    open_store(db, Role.WRITE).close()  # create the schema first
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(db), who, "60"],
                         stdout=subprocess.PIPE, text=True)
        for who in ("ann", "bob")
    ]
    outs = [p.communicate(timeout=120)[0].split() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    with open_store(db, Role.WRITE) as st:
        assert {v.uid for v in st.history()} == set(outs[0]) | set(outs[1])
        assert len(st.current("b")) == 120
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_two_connections_in_one_process_see_each_other(tmp_path):
    db = tmp_path / "reviews.sqlite"
    a, b = open_store(db, Role.WRITE, reviewer="ann"), open_store(db, Role.WRITE, reviewer="bob")
    a.record("b", "s1", "fine")
    assert b.verdict_of("b", "s1", reviewer="ann").verdict == "fine"
    b.record("b", "s1", "gt_wrong")
    assert {v.reviewer for v in a.current("b")} == {"ann", "bob"}
    a.close()
    b.close()
