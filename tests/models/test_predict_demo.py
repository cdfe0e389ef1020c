"""`masklens predict` end to end on the bundled demo with the real kinds and the `demo` backend,
and a real Ctrl-C (SIGINT) in a separate process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from masklens.core.cli import main

demo = pytest.importorskip("masklens.core.kinds.demo")
KINDS = demo.demo_kinds()
PRED_FLAG = {"hallusegbench": "--pred-dir"}


@pytest.mark.parametrize("kind", KINDS)
def test_predict_demo_then_score(kind, tmp_path, capsys):
    argv = demo.demo_argv(kind, with_predictions=False)
    out = tmp_path / (kind if kind == "hallusegbench" else f"{kind}.json")
    rc = main(["predict", kind, "--model", "demo", *argv, "--quiet",
               "--cache-dir", str(tmp_path / "cache"), "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    assert "0 missing" in capsys.readouterr().err
    # the output is what `masklens score` reads
    scored = tmp_path / "score.json"
    assert main(["score", kind, *argv, PRED_FLAG.get(kind, "--pred"), str(out), "--out", str(scored)]) == 0
    summary = json.loads(scored.read_text())["summary"]
    assert summary and all(isinstance(v, dict) for v in summary.values())
    # (that the committed demo predictions equal this command's output is tests/demo's test)


@pytest.mark.skipif("cafe" not in KINDS, reason="no CAFE demo")
def test_rerun_on_demo_is_answered_from_the_cache(tmp_path, capsys):
    argv = demo.demo_argv("cafe", with_predictions=False)
    cmd = ["predict", "cafe", "--model", "demo", *argv, "--quiet", "--cache-dir", str(tmp_path / "c"),
           "--out", str(tmp_path / "p.json")]
    assert main(cmd) == 0
    capsys.readouterr()
    assert main(cmd) == 0
    err = capsys.readouterr().err
    assert "(36 from the cache, 0 computed" in err or " 0 computed" in err


SLOW_RUN = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {tests!r})
    from test_predict_toykind import ColourSegmenter, ToyKind
    from masklens.core.scoring import contract as scoring
    from masklens.core.models import registry
    from masklens.core.cli import main

    def factory(**options):
        seg = ColourSegmenter(**options)
        def hook(request):
            print("prompt", seg.calls, file=sys.stderr, flush=True)
            time.sleep(0.3)
        seg.hook = hook
        return seg

    scoring.register_kind("toy", ToyKind())
    registry.register_backend(ColourSegmenter.info, factory)
    sys.exit(main(sys.argv[1:]))
    """
)


@pytest.mark.slow  # a real process, interrupted
def test_real_sigint_leaves_a_resumable_state(tmp_path):
    """Ctrl-C delivered as a real SIGINT mid-run: exit 130, one message, finished images cached,
    no output written; the re-run computes only the rest."""
    from test_predict_toykind import make_toy_benchmark

    ann = make_toy_benchmark(tmp_path / "bench")
    script = tmp_path / "run.py"
    script.write_text(SLOW_RUN.format(tests=str(Path(__file__).parent)))
    out = tmp_path / "pred.json"
    args = ["predict", "toy", "--model", "toy-colour", "--ann", str(ann), "--quiet",
            "--cache-dir", str(tmp_path / "cache"), "--out", str(out)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, str(script), *args], stderr=subprocess.PIPE, text=True, env=env)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("prompt 4"):  # second image in progress (a.png's three prompts are done)
            proc.send_signal(signal.SIGINT)
            break
    rest = proc.stderr.read()
    proc.wait(timeout=60)
    assert proc.returncode == 130, rest
    assert "interrupted" in rest and "Traceback" not in rest
    assert not out.exists()
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "(3 from the cache, 2 computed" in done.stderr
    assert sum(ln.startswith("prompt") for ln in done.stderr.splitlines()) == 2
    assert len(json.loads(out.read_text())) == 3
