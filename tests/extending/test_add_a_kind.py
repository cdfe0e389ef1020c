"""docs/extending.md, proven: the Squares kind (tests/extending/squares/, a package with its own
pyproject.toml and masklens entry points) is built as a wheel, installed into a fresh venv beside
masklens, and found there by the command line, the Python API, the batch report and the window —
without a line of masklens changed or registered by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SQUARES = Path(__file__).parent / "squares"


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh venv that sees this environment's packages (masklens among them) and has the
    Squares wheel installed into its own site-packages: its python."""
    root = tmp_path_factory.mktemp("plugin")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "-w", str(root / "dist"), str(SQUARES)],
                   check=True, cwd=root, timeout=300)
    (wheel,) = (root / "dist").glob("masklens_squares-*.whl")
    env_dir = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=300)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    here = sysconfig.get_paths()["purelib"]
    # the packages of the environment running the tests, processed as a site dir (its .pth files too)
    (site / "dev_environment.pth").write_text(f"import site; site.addsitedir({here!r})\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                    "--disable-pip-version-check", str(wheel)], check=True, timeout=300)
    return python


def run(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "MPLBACKEND": "Agg"}
    return subprocess.run([str(python), *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=600)


@pytest.fixture(scope="module")
def example(venv, tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("squares")
    done = run(venv, "-c", "import sys, json; from masklens_squares.kind import write_example; "
               "print(json.dumps({k: str(v) for k, v in write_example(__import__('pathlib').Path(sys.argv[1])).items()}))",
               str(folder), cwd=folder)
    assert done.returncode == 0, done.stderr
    return {k: Path(v) for k, v in json.loads(done.stdout).items()}


def test_masklens_alone_does_not_know_the_kind():
    import masklens.core as ml

    assert "squares" not in ml.kind_names()


def test_the_command_line_lists_and_scores_it(venv, example, tmp_path):
    listed = run(venv, "-m", "masklens", "score", "--help", cwd=tmp_path)
    assert listed.returncode == 0 and "squares" in listed.stdout
    flags = run(venv, "-m", "masklens", "score", "squares", "--help", cwd=tmp_path)
    assert "--ann" in flags.stdout and "--score-threshold" in flags.stdout
    out = tmp_path / "scores.json"
    scored = run(venv, "-m", "masklens", "score", "squares", "--ann", str(example["ann"]),
                 "--pred", str(example["pred"]), "--out", str(out), cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr
    cli = json.loads(out.read_text())
    # a: IoU 1; b: the half square (s 0.5 ≥ t, IoU 0.5), the whole one is below t; c: no overlap
    assert [r["IoU"] for r in cli["samples"]] == [1.0, 0.5, 0.0]
    assert cli["summary"]["all"]["N"] == 3 and cli["summary"]["all"]["mIoU"] == 0.5


def test_the_python_api_scores_it_as_the_command_line_does(venv, example, tmp_path):
    script = textwrap.dedent(f"""
        import json
        import masklens.core as ml
        r = ml.score("squares", ann={str(example['ann'])!r}, pred={str(example['pred'])!r})
        low = ml.score("squares", ann={str(example['ann'])!r}, pred={str(example['pred'])!r},
                       score_threshold=0.4)
        print(json.dumps({{"kinds": ml.kind_names(), "summary": r.summary,
                           "low": [s["IoU"] for s in low.samples]}}))
    """)
    done = run(venv, "-c", script, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert "squares" in got["kinds"] and "cafe" in got["kinds"]
    assert got["summary"]["all"] == {"N": 3, "mIoU": 0.5, "hit_rate": pytest.approx(2 / 3)}
    assert got["low"] == [1.0, 1.0, 0.0]


def test_the_report_uses_its_layout(venv, example, tmp_path):
    out = tmp_path / "report"
    done = run(venv, "-m", "masklens", "report", "squares", "--ann", str(example["ann"]),
               "--pred", str(example["pred"]), "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    script = ("from masklens.core.reports.layout import get_layout; l = get_layout('squares'); "
              "print(type(l).__module__, *l.headline)")
    assert run(venv, "-c", script, cwd=tmp_path).stdout.split() == ["masklens_squares.report", "mIoU", "hit_rate"]
    page = (out / "report.html").read_text()
    assert "Squares" in page and "hit_rate" in page


def test_the_window_offers_it_and_shows_its_card(venv, example, tmp_path):
    script = textwrap.dedent(f"""
        import sys, time
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        from masklens.gui import cards
        from masklens.gui.dialogs.open_dialog import OpenDialog
        from masklens.gui.window.main_window import MainWindow

        dialog = OpenDialog()
        names = [dialog.kinds.itemData(i) for i in range(dialog.kinds.count())]
        dialog.kinds.setCurrentIndex(names.index("squares"))
        print("dialog", dialog.kind().title, *sorted(f.action.dest for f in dialog.fields))
        w = MainWindow(persist=False)
        w.resize(1400, 900)
        w.show()
        ok = w.commands.open_benchmark("squares", ["--ann", {str(example['ann'])!r}, "--pred", {str(example['pred'])!r}])
        card = cards.card_for("squares")
        deadline = time.monotonic() + 120  # a condition, with a generous bound for a loaded machine
        while w.findChild(card) is None and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.01)
        print("window", ok, card.__module__, card.__name__, w.findChild(card) is not None)
        w.jobs.cancel_all()
        w.rescoring.runner.cancel_all()
        while (w.jobs.busy or w.rescoring.runner.busy) and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.01)
        w.close()
    """)
    done = run(venv, "-c", script, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    dialog = next(line for line in lines if line.startswith("dialog")).split()
    assert dialog[1] == "Squares" and {"ann", "pred"} <= set(dialog[2:])
    assert next(line for line in lines if line.startswith("window")).split()[1:] == [
        "True", "masklens_squares.card", "SquaresCard", "True"]
