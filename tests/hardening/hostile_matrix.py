"""The hostile matrix: every command of the CLI's own command table that writes × every hostile
target, and every command that reads a review store × every hostile store.

The commands come from the parser itself (:func:`leaf_commands` walks ``build_parser()``), so a
new command joins the matrix as soon as it is registered — or fails
``test_every_command_is_in_the_matrix_or_classified`` until it is given a place here:
:data:`WRITERS` (how to point its output at a target), :data:`STORE_READERS` (how to hand it a
store) or :data:`NEITHER` (why it has no place in either).

Each cell runs the real command line in this process (``masklens.core.cli.main``) inside a
fresh scratch folder holding the CAFE demo, a review store with a verdict, a correction and an
assignment, and the user's own files. Afterwards:

- every file that was there before has the same SHA-256 and nothing vanished (the file named
  itself as a file output may be replaced: that is the write asked for), and
- the answer is a correct write or read (exit 0), or a clean error: exit 1 or 2 with one
  ``masklens: error:`` line (or argparse's usage error), never a traceback.

``python tests/hardening/hostile_matrix.py`` (part of ``make fuzz``) runs every cell and prints
the counts; the suite runs a trimmed matrix (tests/hardening/test_hostile_matrix.py).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script (make fuzz): the tests folder on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from review.hostile_stores import (  # noqa: E402
    HOSTILE_CELLS,
    VERDICT_CELLS,
    garbage_on_page_one,
    short,
    spoil_cell,
    truncate,
)
from review.old_stores import old_store  # noqa: E402

from masklens.core.cli import build_parser, main  # noqa: E402
from masklens.core.kinds.demo import DEMO_DIR, demo_argv  # noqa: E402

KIND = "cafe"
BENCHMARK_KEY = "cafe:ann"

Argv = Callable[["Scratch", Path], list[str]]


# ------------------------------------------------------------------ the scratch folder
@dataclass
class Scratch:
    """One cell's folder: ``data/`` (the CAFE demo, the review store ``data/S.sqlite``, a
    shard output for ``merge``), ``user/`` (the user's own files) and ``new/`` (fresh paths)."""

    base: Path
    mounts: list[Path] = field(default_factory=list)

    @property
    def data(self) -> Path:
        return self.base / "data"

    @property
    def store(self) -> Path:
        return self.data / "S.sqlite"

    @property
    def user(self) -> Path:
        return self.base / "user"

    def fresh(self, name: str) -> Path:
        (self.base / "new").mkdir(exist_ok=True)
        return self.base / "new" / name

    def gt(self) -> list[str]:
        return demo_argv(KIND, with_predictions=False, root=self.data)

    def full(self) -> list[str]:
        return demo_argv(KIND, root=self.data)

    def mount(self, *args: str) -> bool:
        """``mount ARGS… TARGET`` (the last argument); False where mounting is not permitted."""
        r = subprocess.run(["mount", *args], capture_output=True, text=True)
        if r.returncode == 0:
            self.mounts.append(Path(args[-1]))
        return r.returncode == 0

    def close(self) -> None:
        for m in reversed(self.mounts):
            subprocess.run(["umount", "-l", str(m)], capture_output=True)
        shutil.rmtree(self.base, ignore_errors=True)


def _template(root: Path) -> Path:
    """The files every cell starts from (made once, copied per cell)."""
    from masklens.core.masks import Mask
    from masklens.core.review.store import Role, open_store

    t = root / "template"
    shutil.copytree(DEMO_DIR / KIND, t / "data" / KIND)
    import masklens.core as ml

    bench = ml.load_benchmark(KIND, ann=t / "data" / KIND / "ann.json")
    s0 = bench.samples[0]
    g = s0.gts["target"]
    import numpy as np

    box = np.zeros((g.height, g.width), bool)
    box[: g.height // 2, : g.width // 2] = True
    with open_store(t / "data" / "S.sqlite", Role.WRITE, reviewer="ana") as st:
        st.add_correction(BENCHMARK_KEY, s0.id, "target", 0, Mask.from_array(box), tool="brush")
        st.record(BENCHMARK_KEY, s0.id, "gt_wrong")
        st.record(BENCHMARK_KEY, bench.samples[1].id, "fine", reviewer="ben")
        st.assign(BENCHMARK_KEY, [s.id for s in bench.samples], ["ana", "ben"])
    ws = Scratch(t)
    with _quiet():
        rc = main(["predict", KIND, *ws.gt(), "--model", "demo", "--no-cache", "--quiet",
                   "--shard", "0/1", "--out", str(t / "data" / "shard.json")])
    assert rc == 0, "the shard output of the template could not be made"
    (t / "user").mkdir()
    return t


_TEMPLATE: dict[str, Path] = {}


def scratch() -> Scratch:
    """A new cell folder, copied from the template (made on first use)."""
    if "root" not in _TEMPLATE:
        _TEMPLATE["root"] = Path(tempfile.mkdtemp(prefix="masklens-matrix-"))
        _TEMPLATE["template"] = _template(_TEMPLATE["root"])
    base = Path(tempfile.mkdtemp(prefix="cell-", dir=_TEMPLATE["root"]))
    shutil.copytree(_TEMPLATE["template"], base, dirs_exist_ok=True)
    return Scratch(base)


# ------------------------------------------------------------------ the command table
def leaf_commands() -> list[tuple[str, ...]]:
    """Every command of ``build_parser()`` down to its last sub-command, the benchmark kind
    left out (``("review", "apply")`` for ``masklens review apply KIND``)."""
    from masklens.core.scoring.contract import kind_names

    kinds = set(kind_names())
    found: list[tuple[str, ...]] = []

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            key = tuple(p for p in path if p not in kinds)
            if key not in found:
                found.append(key)
            return
        for name, sub in subs[0].choices.items():
            walk(sub, (*path, name))

    walk(build_parser(), ())
    return found


_PRED_RUN = ["--model", "demo", "--no-cache", "--quiet"]

#: command -> its argv with its output at the target
WRITERS: dict[tuple[str, ...], Argv] = {
    ("score",): lambda w, t: ["score", KIND, *w.full(), "--out", str(t)],
    ("predict",): lambda w, t: ["predict", KIND, *w.gt(), *_PRED_RUN, "--out", str(t)],
    ("evaluate",): lambda w, t: ["evaluate", KIND, *w.gt(), *_PRED_RUN, "--out", str(t)],
    ("merge",): lambda w, t: ["merge", KIND, *w.gt(), "--pred", str(w.data / "shard.json"), "--out", str(t)],
    ("report",): lambda w, t: ["report", KIND, *w.full(), "--no-sweep", "--gallery", "0",
                               "--reviews", str(w.store), "--out", str(t)],
    ("export",): lambda w, t: ["export", KIND, *w.full(), "--to", "csv", "--reviews", str(w.store),
                               "--out", str(t)],
    ("review", "export"): lambda w, t: ["review", "export", str(w.store), "--out", str(t)],
    ("review", "merge"): lambda w, t: ["review", "merge", str(t), str(w.store)],
    ("review", "apply"): lambda w, t: ["review", "apply", KIND, *w.gt(), "--store", str(w.store),
                                       "--out", str(t)],
    ("review", "assign"): lambda w, t: ["review", "assign", KIND, *w.gt(), "--store", str(t),
                                        "--reviewers", "ana,ben"],
}

#: writers whose target is a single file (a regular file named as the output may be replaced)
FILE_WRITERS = {("score",), ("predict",), ("merge",), ("review", "export"), ("review", "apply")}
#: writers whose target is a review store (written into, never replaced)
STORE_WRITERS = {("review", "merge"), ("review", "assign")}

#: command -> its argv reading the store
STORE_READERS: dict[tuple[str, ...], Argv] = {
    ("score",): lambda w, s: ["score", KIND, *w.full(), "--corrections", str(s)],
    ("report",): lambda w, s: ["report", KIND, *w.full(), "--no-sweep", "--gallery", "0",
                               "--reviews", str(s), "--out", str(w.fresh("report"))],
    ("export",): lambda w, s: ["export", KIND, *w.full(), "--to", "csv", "--reviews", str(s),
                               "--corrections", str(s), "--out", str(w.fresh("export"))],
    ("review", "apply"): lambda w, s: ["review", "apply", KIND, *w.gt(), "--store", str(s),
                                       "--out", str(w.fresh("c.json"))],
    ("review", "queue"): lambda w, s: ["review", "queue", str(s), "--benchmark", BENCHMARK_KEY],
    ("review", "summary"): lambda w, s: ["review", "summary", str(s)],
    ("review", "export"): lambda w, s: ["review", "export", str(s), "--out", str(w.fresh("v.json"))],
    ("review", "agreement"): lambda w, s: ["review", "agreement", str(s)],
    ("review", "check"): lambda w, s: ["review", "check", str(s)],
    ("review", "merge"): lambda w, s: ["review", "merge", str(w.fresh("m.sqlite")), str(s)],
}

#: commands with no place in the matrix, and why
NEITHER: dict[tuple[str, ...], str] = {
    ("models",): "lists the model backends; reads and writes no user path",
    ("cache", "info"): "shows masklens' own prediction cache",
    ("cache", "clear"): "removes entries of masklens' own prediction cache; takes no output path",
    ("config",): "lists the settings; writes nothing",
    ("completion",): "prints a shell script to stdout",
    ("install-desktop",): "writes its two files under XDG_DATA_HOME only, never a path it is given",
    ("gui",): "the window (its store and files are tested in tests/gui)",
}


# ------------------------------------------------------------------ targets
@dataclass
class Target:
    """A hostile output target: ``make(scratch, command)`` returns the path to give, or None
    where it cannot be made here (no mount permitted, no device node)."""

    name: str
    make: Callable[[Scratch, tuple[str, ...]], Path | None]


def _user_folder(w: Scratch, name: str) -> Path:
    d = w.user / name
    (d / "sub").mkdir(parents=True)
    (d / "thesis.tex").write_text("the user's own\n")
    (d / "sub" / "data.csv").write_text("1,2\n")
    return d


def _with_summary(w: Scratch, command: tuple[str, ...]) -> Path:
    d = w.user / "results"
    d.mkdir()
    (d / "summary.json").write_text('{"the user\'s": "own summary"}\n')
    return d


def _with_manifest(w: Scratch, command: tuple[str, ...]) -> Path:
    d = w.user / "exported"
    (d / "thesis").mkdir(parents=True)
    (d / "masklens-export.json").write_text('{"the user\'s": "own file"}\n')
    (d / "photos.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    (d / "thesis" / "chapter1.tex").write_text("the user's own\n")
    return d


def _copied_output(w: Scratch, command: tuple[str, ...]) -> Path | None:
    """The command's own output, copied elsewhere by the user, with a file of theirs added."""
    first = w.fresh("first")
    if command in STORE_WRITERS:
        first = w.fresh("first.sqlite")
    if command in FILE_WRITERS and command != ("review", "merge"):
        first = w.fresh("first.json")
    with _quiet():
        rc = main(WRITERS[command](w, first))
    if rc != 0 or not first.exists():
        return None
    copy = w.user / ("copy" + first.suffix)
    if first.is_dir():
        shutil.copytree(first, copy)
        (copy / "my-notes.md").write_text("the user's own\n")
    else:
        shutil.copy2(first, copy)
    return copy


def _symlink(w: Scratch, command: tuple[str, ...]) -> Path:
    link = w.user / "link"
    link.symlink_to(_user_folder(w, "linked"), target_is_directory=True)
    return link


def _regular_file(w: Scratch, command: tuple[str, ...]) -> Path:
    f = w.user / "notes.txt"
    f.write_text("the user's own\n")
    return f


def _fifo(w: Scratch, command: tuple[str, ...]) -> Path:
    f = w.user / "pipe"
    os.mkfifo(f, 0o600)
    return f


def _device(w: Scratch, command: tuple[str, ...]) -> Path | None:
    """A private character device (1, 3), as /dev/null is, made in the scratch folder."""
    f = w.user / "null-device"
    try:
        os.mknod(f, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except OSError:
        return None
    return f


def _read_only(w: Scratch, command: tuple[str, ...]) -> Path | None:
    d = w.user / "read-only"
    d.mkdir()
    (d / "thesis.tex").write_text("the user's own\n")
    if not (w.mount("--bind", str(d), str(d)) and w.mount("-o", "remount,bind,ro", str(d))):
        return None
    return d / ("out.sqlite" if command in STORE_WRITERS else "out")


def _full_disk(w: Scratch, command: tuple[str, ...]) -> Path | None:
    d = w.user / "full"
    d.mkdir()
    if not w.mount("-t", "tmpfs", "-o", "size=256k", "tmpfs", str(d)):
        return None
    (d / "thesis.tex").write_text("the user's own\n")
    with (d / "filler").open("wb", buffering=0) as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 4096)
    return d / ("out.sqlite" if command in STORE_WRITERS else "out")


def _inputs(w: Scratch, command: tuple[str, ...]) -> list[tuple[str, Path]]:
    """The command's inputs as its own argv names them (every existing path under ``data/``),
    then each one's folder: (target name, path relative to the scratch folder)."""
    argv = WRITERS[command](w, w.fresh("probe"))
    paths: list[Path] = []
    for a in argv:
        p = Path(a)
        if p.is_absolute() and p.exists() and w.data in (p, *p.parents) and p not in paths:
            paths.append(p.relative_to(w.base))
    out = [(f"input {p}", p) for p in paths]
    out += [(f"input's folder {q}", q) for q in sorted({p.parent for p in paths})]
    return out


TARGETS = [
    Target("a folder of user files", lambda w, c: _user_folder(w, "mine")),
    Target("a folder with the user's summary.json", _with_summary),
    Target("a folder with the user's masklens-export.json", _with_manifest),
    Target("a copied output with a user file", _copied_output),
    Target("a symlink to a user folder", _symlink),
    Target("a regular file", _regular_file),
    Target("a private FIFO", _fifo),
    Target("a private device node", _device),
    Target("a read-only folder", _read_only),
    Target("a full tmpfs", _full_disk),
]

# ------------------------------------------------------------------ stores
def _store_variants() -> dict[str, Callable[[Scratch], Path | None]]:
    def copy(w: Scratch, name: str) -> Path:
        d = w.base / "stores" / name.replace(" ", "_").replace("/", "_")[:40]
        d.mkdir(parents=True)
        shutil.copy2(w.store, d / "S.sqlite")
        return d / "S.sqlite"

    def old(version: int) -> Callable[[Scratch], Path]:
        def make(w: Scratch) -> Path:
            d = w.base / "stores" / f"v{version}"
            d.mkdir(parents=True)
            return old_store(d / "S.sqlite", version)
        return make

    def read_only(w: Scratch) -> Path | None:
        p = copy(w, "read-only mount")
        d = p.parent
        if not (w.mount("--bind", str(d), str(d)) and w.mount("-o", "remount,bind,ro", str(d))):
            return None
        return p

    def full_disk(w: Scratch) -> Path | None:
        d = w.base / "stores" / "full"
        d.mkdir(parents=True)
        if not w.mount("-t", "tmpfs", "-o", "size=512k", "tmpfs", str(d)):
            return None
        shutil.copy2(w.store, d / "S.sqlite")
        with (d / "filler").open("wb", buffering=0) as fh, contextlib.suppress(OSError):
            while True:
                fh.write(b"\0" * 4096)
        return d / "S.sqlite"

    def changed(name: str, spoil: Callable[[Path], None]) -> Callable[[Scratch], Path]:
        def make(w: Scratch) -> Path:
            p = copy(w, name)
            spoil(p)
            return p
        return make

    def fifo(w: Scratch) -> Path:
        d = w.base / "stores" / "fifo"
        d.mkdir(parents=True)
        os.mkfifo(d / "S.sqlite", 0o600)
        return d / "S.sqlite"

    def folder(w: Scratch) -> Path:
        d = w.base / "stores" / "folder" / "S.sqlite"
        d.mkdir(parents=True)
        (d / "inside.txt").write_text("the user's own\n")
        return d

    variants: dict[str, Callable[[Scratch], Path | None]] = {
        "v1": old(1), "v2": old(2), "v3": old(3), "v4": lambda w: copy(w, "v4"),
        "read-only mount": read_only, "v4 on a full disk": full_disk,
        "truncated to page 1": changed("truncated page 1", lambda p: truncate(p, 4096)),
        "truncated to 100 bytes": changed("truncated 100", lambda p: truncate(p, 100)),
        "garbage on page 1": changed("garbage", garbage_on_page_one),
    }
    for cell in HOSTILE_CELLS:
        variants[f"cell {short(cell)}"] = changed(f"cell {len(variants)}",
                                                  lambda p, c=cell: spoil_cell(p, c))
    for cell in VERDICT_CELLS:
        variants[f"verdict cell {short(cell)}"] = changed(f"verdict cell {len(variants)}",
                                                          lambda p, c=cell: spoil_cell(p, c, "verdicts"))
    variants["a FIFO"] = fifo
    variants["a folder"] = folder
    return variants


STORES = _store_variants()


# ------------------------------------------------------------------ running a cell
@contextlib.contextmanager
def _quiet() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield out, err


def _digest(p: Path) -> str:
    h = hashlib.sha256()
    with p.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def snapshot(root: Path, skip: Path | None = None) -> dict[str, str]:
    """Every entry below ``root``: a regular file by its SHA-256, anything else by its type
    (links not followed; ``skip`` and what lies below it left out)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            p = Path(dirpath) / name
            if skip is not None and (p == skip or skip in p.parents):
                continue
            st = p.lstat()
            if stat.S_ISREG(st.st_mode):
                out[str(p.relative_to(root))] = _digest(p)
            elif not stat.S_ISDIR(st.st_mode):
                out[str(p.relative_to(root))] = stat.filemode(st.st_mode)[0]
    return out


@dataclass
class Outcome:
    matrix: str  # "write" or "read"
    command: tuple[str, ...]
    target: str
    outcome: str  # "valid write", "valid read", "clean error", "skipped", or a failure
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.outcome not in ("valid write", "valid read", "clean error", "skipped")

    def line(self) -> str:
        return f"{self.outcome:14} {' '.join(self.command):17} × {self.target}: {self.detail}"


def _answer(argv: list[str]) -> tuple[int | None, str, str]:
    """(exit status or None for an escaped exception, stdout, stderr) of ``masklens ARGV``."""
    with _quiet() as (out, err):
        try:
            rc: int | None = main(argv)
        except SystemExit as exc:  # argparse's usage errors
            rc = exc.code if isinstance(exc.code, int) else 2
        except BaseException:  # noqa: BLE001 - a traceback is what the matrix looks for
            import traceback

            traceback.print_exc(file=err)
            rc = None
    return rc, out.getvalue(), err.getvalue()


def _clean_error(rc: int | None, out: str, err: str) -> bool:
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith("  ")]
    said = any(x.startswith("masklens: error:") or (x.startswith("masklens ") and ": error:" in x)
               for x in lines)
    damaged = rc == 1 and "DAMAGED" in out  # review check reporting a damaged store
    return rc in (1, 2) and (said or damaged)


def _judge(matrix: str, command: tuple[str, ...], target: str, rc: int | None, out: str, err: str,
           before: dict[str, str], after: dict[str, str], wrote: bool) -> Outcome:
    text = out + err
    if rc is None or "Traceback" in text:
        tail = [x for x in err.splitlines() if x.strip()][-1:] or ["?"]
        return Outcome(matrix, command, target, "traceback", tail[0])
    changed = sorted(k for k in before if after.get(k) != before[k])
    if changed:
        return Outcome(matrix, command, target, "bytes changed", ", ".join(changed[:5]))
    if rc == 0:
        if matrix == "write" and not wrote:
            return Outcome(matrix, command, target, "no output", "exit 0, nothing written")
        return Outcome(matrix, command, target, f"valid {matrix}")
    if _clean_error(rc, out, err):
        first = next((x for x in err.splitlines() if "error" in x), out.strip()[:120])
        return Outcome(matrix, command, target, "clean error", first[:160])
    return Outcome(matrix, command, target, "unclean", f"exit {rc}: {text.strip()[-160:]}")


def run_write(command: tuple[str, ...], target: str, make: Callable[[Scratch], Path | None]) -> Outcome:
    w = scratch()
    try:
        path = make(w)
        if path is None:
            return Outcome("write", command, target, "skipped", "not possible on this machine")
        # a file named as a file output is replaced, a store named as a store is written into:
        # that is the write asked for (its bytes may change; every other file's may not)
        replaceable = path.is_file() and (
            (command in FILE_WRITERS and target in ("a regular file", "a copied output with a user file"))
            or (command in STORE_WRITERS and target == "a copied output with a user file"))
        before = snapshot(w.base, skip=path if replaceable else None)
        rc, out, err = _answer(WRITERS[command](w, path))
        after = snapshot(w.base, skip=path if replaceable else None)
        wrote = path.exists() or path.is_symlink()
        return _judge("write", command, target, rc, out, err, before, after, wrote)
    finally:
        w.close()


def run_read(command: tuple[str, ...], store: str) -> Outcome:
    w = scratch()
    try:
        path = STORES[store](w)
        if path is None:
            return Outcome("read", command, store, "skipped", "not possible on this machine")
        folder = w.base / "stores"
        before = snapshot(folder)
        rc, out, err = _answer(STORE_READERS[command](w, path))
        after = {k: v for k, v in snapshot(folder).items() if ".damaged-" not in k}  # the copy kept
        added = sorted(set(after) - set(before))
        if added:  # a reader leaves nothing beside the store (no -wal, no -shm)
            return Outcome("read", command, store, "bytes changed", "left " + ", ".join(added))
        return _judge("read", command, store, rc, out, err, before, after, True)
    finally:
        w.close()


def write_cells(trim: int | None = None) -> list[tuple[tuple[str, ...], str, Callable[[Scratch], Path | None]]]:
    """(command, target name, make) of every writer × every target; ``trim``: only every
    ``trim``-th target of each command, in turn, for the suite's quick run."""
    cells = []
    for command in WRITERS:
        targets: list[tuple[str, Callable[[Scratch], Path | None]]] = [
            (t.name, lambda w, t=t, c=command: t.make(w, c)) for t in TARGETS]
        probe = scratch()
        try:
            for name, rel in _inputs(probe, command):
                targets.append((name, lambda w, rel=rel: w.base / rel))
        finally:
            probe.close()
        cells += [(command, n, m) for n, m in targets]
    if trim:
        cells = [c for i, c in enumerate(cells) if i % trim == 0]
    return cells


def read_cells(trim: int | None = None) -> list[tuple[tuple[str, ...], str]]:
    cells = [(c, s) for c in STORE_READERS for s in STORES]
    if trim:
        cells = [c for i, c in enumerate(cells) if i % trim == 0]
    return cells


def run_matrix(trim: int | None = None, progress: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    results = []
    for command, name, make in write_cells(trim):
        results.append(run_write(command, name, make))
        if progress:
            progress(results[-1])
    for command, store in read_cells(trim):
        results.append(run_read(command, store))
        if progress:
            progress(results[-1])
    return results


def counts(results: list[Outcome]) -> dict[str, int]:
    c = Counter(r.outcome for r in results)
    return {"runs": len(results), **dict(sorted(c.items()))}


def cleanup() -> None:
    if "root" in _TEMPLATE:
        shutil.rmtree(_TEMPLATE.pop("root"), ignore_errors=True)
        _TEMPLATE.clear()


def main_script() -> int:
    ap = argparse.ArgumentParser(description="the full hostile matrix (make fuzz)")
    ap.add_argument("--trim", type=int, default=None, help="only every TRIM-th cell")
    args = ap.parse_args()

    def show(o: Outcome) -> None:
        if o.failed:
            print(o.line(), file=sys.stderr, flush=True)

    try:
        results = run_matrix(args.trim, show)
    finally:
        cleanup()
    for matrix in ("write", "read"):
        part = [r for r in results if r.matrix == matrix]
        print(f"{matrix:5} matrix: " + ", ".join(f"{k} {v}" for k, v in counts(part).items()))
    print("total:       " + ", ".join(f"{k} {v}" for k, v in counts(results).items()))
    return int(any(r.failed for r in results))


if __name__ == "__main__":
    sys.exit(main_script())
