"""Run one mutated input through the real CLI in a subprocess (memory cap, time limit) and
classify what happened: clean error, traceback, signal, hang, valid (exit 0), or a read
outside the input root (exit 0 although a path pointed outside it)."""

from __future__ import annotations

import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import fuzz_files as ff
import fuzz_json as fj
import fuzz_names as fh
import fuzz_stores as fs
from fuzz_cases import KINDS, Workspace, make_workspace, previous_output_intact

MEMORY_CAP = int(os.environ.get("MASKLENS_FUZZ_MEMORY", 3 << 30))  # bytes of address space per run
TIME_LIMIT = float(os.environ.get("MASKLENS_FUZZ_TIMEOUT", 60))  # seconds per run before "hang"
OUTCOMES = ("clean error", "traceback", "signal", "hang", "other", "lost output", "accepted bad type",
            "refused valid", "outside root", "valid")
#: outcomes that fail the suite ("outside root" is reported apart: see ROOT_GUARD_MERGED in the test)
FAILING = ("traceback", "signal", "hang", "other", "lost output", "accepted bad type", "refused valid")


@dataclass
class Outcome:
    kind: str
    command: str
    index: int
    mutation: str
    outcome: str
    returncode: int | None
    stderr_tail: str

    def line(self) -> str:
        return f"{self.command} {self.kind} #{self.index} [{self.mutation}] -> {self.outcome} " \
               f"(rc={self.returncode}): {self.stderr_tail[-600:]}"


Mutation = Callable[[random.Random, Workspace], str]


def _on_json(fn: Callable[..., str]) -> Mutation:
    def apply(rng: random.Random, ws: Workspace) -> str:
        f = rng.choice(ws.json_inputs())
        return f"{f.name}: {fn(rng, ws, f)}"
    apply.__name__ = fn.__name__
    return apply


def mutation_classes(kind: str, command: str, *, big_mb: int) -> list[tuple[str, Mutation]]:
    """Every mutation class that applies to ``kind`` (fixed order: the i-th run uses class i mod n)."""
    classes: list[tuple[str, Mutation]] = []
    if command == "predict":  # names: hostile image names and hf:// paths, and Ctrl+C
        return [*fh.PREDICT_MUTATIONS.items(), *fs.SIGNAL_MUTATIONS.items()]
    for name, fn in fj.JSON_MUTATIONS.items():
        if name == "big_json":
            classes.append((name, _on_json(lambda rng, ws, f: fj.big_json(rng, ws, f, megabytes=big_mb))))
        else:
            classes.append((name, _on_json(fn)))
    for name, fn in ff.FILE_KIND_MUTATIONS.items():
        if name != "unreadable" or os.geteuid() != 0:  # root reads mode-000 files anyway
            classes.append((name, _on_json(fn)))
    classes.append(("argv_path", ff.argv_path))
    classes += list(fs.SIGNAL_MUTATIONS.items())
    classes += list(fh.NAME_MUTATIONS.items())
    if kind == "hallusegbench":
        classes += [("png", ff.hallu_png), ("png_file_kind", ff.hallu_png_kind), ("path_field", ff.hallu_path_field)]
    if kind == "ovs":
        classes += [("npy", ff.ovs_npy), ("score_map_png", ff.ovs_png), ("path_field", ff.ovs_path_field)]
    if command == "report":
        classes += [("gallery_file_name", ff.gallery_file_name), ("image_png", ff.image_png)]
        classes += list(fs.STORE_MUTATIONS.items())
    return classes


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))


def cli() -> list[str]:
    script = Path(sys.executable).with_name("masklens")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from masklens.core.cli import main; sys.exit(main())"]


def run_cli(argv: list[str], *, timeout: float = TIME_LIMIT, program: list[str] | None = None,
            interrupt_after: float | None = None, env: dict[str, str] | None = None) -> tuple[int | None, str]:
    """(return code or None on a hang, stderr) of ``masklens ARGV`` (or ``program ARGV``) under
    the memory cap and the time limit; ``interrupt_after``: send SIGINT (Ctrl+C) that many
    seconds after the start, if it is still running; ``env``: added to the environment."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               TQDM_DISABLE="1", **(env or {}))
    env.pop("PYTHONFAULTHANDLER", None)
    proc = subprocess.Popen([*(program or cli()), *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, preexec_fn=_limits, start_new_session=True, env=env)
    try:
        if interrupt_after is not None:
            try:
                _, err = proc.communicate(timeout=interrupt_after)
                return proc.returncode, err.decode("utf-8", "replace")
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=timeout)  # stdout is a pipe, as `masklens … | less`
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        return None, err.decode("utf-8", "replace")
    return proc.returncode, err.decode("utf-8", "replace")


def classify(rc: int | None, err: str, ws: Workspace) -> str:
    if rc is None:
        return "hang"
    if rc < 0:
        return "signal"
    if "Traceback (most recent call last)" in err:
        return "traceback"
    if rc == 0:
        return "outside root" if ws.outside_root else "accepted bad type" if ws.expect_error else "valid"
    if ws.expect_valid and rc != 130:
        return "refused valid"
    if not previous_output_intact(ws):
        return "lost output"
    if "masklens: error:" in err or "error: argument" in err or "error: the following" in err:
        return "clean error"
    if rc == 130 and "masklens: interrupted" in err:  # Ctrl+C (the sigint class)
        return "clean error"
    return "other"


def run_case(kind: str, command: str, index: int, *, seed: int, big_mb: int, scratch: Path) -> Outcome:
    rng = random.Random(f"{seed}:{command}:{kind}:{index}")
    classes = mutation_classes(kind, command, big_mb=big_mb)
    name, mutate = classes[index % len(classes)]
    base = Path(tempfile.mkdtemp(prefix=f"{kind}-{index}-", dir=scratch))
    try:
        ws = make_workspace(base, kind, command)
        ws.use_out = command != "score" or index % 5 != 4  # every fifth score run prints to stdout
        try:
            detail = mutate(rng, ws)
        except Exception as exc:  # a mutation that does not apply to this file: still run it
            detail = f"{name} (not applied: {type(exc).__name__}: {exc})"
        rc, err = run_cli(ws.full_argv(), interrupt_after=ws.interrupt_after, env=ws.env)
        outcome = classify(rc, err, ws)
        return Outcome(kind, command, index, detail, outcome, rc, err.strip()[-2000:])
    finally:
        for p in base.rglob("*"):  # mode-000 files and FIFOs must not stop the clean-up
            if p.is_file() and not p.is_symlink():
                p.chmod(0o644)
        shutil.rmtree(base, ignore_errors=True)


def run_many(plan: Iterable[tuple[str, str, int]], *, seed: int, big_mb: int, workers: int = 2,
             progress: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    with tempfile.TemporaryDirectory(prefix="masklens-fuzz-") as tmp, ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(run_case, k, c, i, seed=seed, big_mb=big_mb, scratch=Path(tmp)) for k, c, i in plan]
        out = []
        for f in futures:
            out.append(f.result())
            if progress:
                progress(out[-1])
        return out


def plan(runs_per_kind: int, report_runs: int, predict_runs: int = 0) -> list[tuple[str, str, int]]:
    jobs = [(k, "score", i) for k in KINDS for i in range(runs_per_kind)]
    jobs += [(KINDS[i % len(KINDS)], "report", i) for i in range(report_runs)]
    kinds = fh.IMAGE_NAME_KINDS
    jobs += [(kinds[i % len(kinds)], "predict", i) for i in range(predict_runs)]
    return jobs


def table(outcomes: list[Outcome]) -> str:
    """The Markdown table of docs/reliability.md: runs per kind and outcome."""
    rows: dict[str, Counter] = {}
    for o in outcomes:
        rows.setdefault(o.kind if o.command == "score" else f"{o.command} ({o.kind})", Counter())[o.outcome] += 1
    cols = list(OUTCOMES)
    head = "| input | runs | " + " | ".join(cols) + " |\n|---|" + "---|" * (len(cols) + 1) + "\n"
    lines = [f"| {k} | {sum(c.values())} | " + " | ".join(str(c[x]) for x in cols) + " |" for k, c in rows.items()]
    total = Counter()
    for c in rows.values():
        total.update(c)
    lines.append(f"| **all** | {sum(total.values())} | " + " | ".join(str(total[x]) for x in cols) + " |")
    return head + "\n".join(lines) + "\n"
