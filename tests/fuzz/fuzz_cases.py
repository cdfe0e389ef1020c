"""Fuzz workspaces: a private copy of one demo kind's valid files, the CLI arguments that
open it, a pre-existing ``--out`` that a failed run must leave intact, and a folder *outside*
the input root that path-escape mutations point into."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from masklens.core.files.output_dirs import write_marker
from masklens.core.kinds.demo import DEMO_DIR, demo_argv

KINDS = ("cafe", "pcs", "hallusegbench", "cgebench", "r2sm", "ovs")
#: flags whose value is an input file the fuzzer may mutate
FILE_FLAGS = ("--ann", "--gt", "--data", "--pred")
SENTINEL = b"previous output: must survive a failed run\n"


@dataclass
class Workspace:
    """One run's files: ``demo/<kind>/`` (inputs), ``outside/`` (beyond the root), ``out…``."""

    kind: str
    base: Path
    command: str = "score"  # or "report", or "predict" (--model demo)
    argv: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    outside_root: bool = False  # a mutation pointed an input path outside its root
    use_out: bool = True  # score without --out prints the table on stdout
    expect_error: bool = False  # the mutation must be refused (an exit 0 is a silent misreading)
    interrupt_after: float | None = None  # seconds after the start to send SIGINT (Ctrl+C)
    expect_valid: bool = False  # the mutation keeps the input valid (a refusal is a wrong result)
    env: dict[str, str] = field(default_factory=dict)  # added to the run's environment

    @property
    def root(self) -> Path:
        return self.base / "demo" / self.kind

    @property
    def outside(self) -> Path:
        return self.base / "outside"

    @property
    def out(self) -> Path:
        return self.base / ("out" if self.command == "report" else "out.json")

    def json_inputs(self) -> list[Path]:
        """Every JSON input file named on the command line (annotations and predictions)."""
        return [Path(self.argv[i + 1]) for i, a in enumerate(self.argv[:-1])
                if a in FILE_FLAGS and self.argv[i + 1].endswith(".json")]

    def pngs(self, *, predictions: bool | None = None) -> list[Path]:
        """Mask/score-map PNGs read while scoring (HalluSegBench masks and prediction folders)."""
        found = sorted(p for p in self.root.rglob("*.png") if "images" not in p.relative_to(self.root).parts)
        if predictions is None:
            return found
        return [p for p in found if ("pred" in p.relative_to(self.root).parts[0]) == predictions]

    def images(self) -> list[Path]:
        return sorted(p for p in self.root.rglob("*.png") if "images" in p.relative_to(self.root).parts)

    def load(self, path: Path):
        return json.loads(path.read_bytes())

    def dump(self, path: Path, obj, *, ensure_ascii: bool = True) -> None:
        path.write_text(json.dumps(obj, ensure_ascii=ensure_ascii), encoding="utf-8", errors="surrogatepass")

    def full_argv(self) -> list[str]:
        out = ["--out", str(self.out)] if self.use_out else []
        return [self.command, self.kind, *self.argv, *out]


def make_workspace(base: Path, kind: str, command: str = "score") -> Workspace:
    """Copy the demo of ``kind`` under ``base`` and prepare the outside folder and old output."""
    ws = Workspace(kind, base, command)
    shutil.copytree(DEMO_DIR / kind, ws.root)
    ws.outside.mkdir()
    src = next(iter(ws.pngs()), None) or next(iter(ws.images()))
    shutil.copy(src, ws.outside / "outside.png")
    (ws.outside / "outside.json").write_text("[]")
    ws.argv = demo_argv(kind, root=base / "demo", with_predictions=command != "predict")
    if command == "predict":
        ws.argv += ["--model", "demo", "--no-cache", "--quiet"]
    if command == "report":
        ws.out.mkdir()
        (ws.out / "report.html").write_bytes(SENTINEL)
        write_marker(ws.out, "report")  # an earlier masklens report: replaced by a valid run
        ws.argv += ["--gallery", "1", "--no-sweep"]
    else:
        ws.out.write_bytes(SENTINEL)
    return ws


def previous_output_intact(ws: Workspace) -> bool:
    """The old ``--out`` is unchanged and no temporary file or folder is left beside it."""
    leftovers = [p.name for p in ws.base.iterdir() if p.name.startswith(".") and ".tmp" in p.name]
    if leftovers:
        return False
    if not ws.use_out:
        return True
    if ws.command == "report":
        return (ws.out / "report.html").is_file() and (ws.out / "report.html").read_bytes() == SENTINEL
    return ws.out.is_file() and ws.out.read_bytes() == SENTINEL
