"""`masklens gui` refuses what it cannot show before any window opens: an unknown --kind, and a
--screenshot --size beyond the image limits (100000x100000 was a segfault)."""

from __future__ import annotations

import pytest

from masklens.core.cli import main

pytest.importorskip("PySide6")


def test_an_unknown_kind_is_refused(capsys):
    assert main(["gui", "--kind", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown benchmark kind 'nope'" in err and "cafe" in err and "Traceback" not in err


@pytest.mark.parametrize("size", ["100000x100000", "40000x1000", "9000x9000"])
def test_a_screenshot_beyond_the_image_limits_is_refused(size, tmp_path, capsys):
    shot = tmp_path / "s.png"
    assert main(["gui", "--screenshot", str(shot), "--size", size]) == 2
    err = capsys.readouterr().err
    assert "larger than the image limits" in err and "Traceback" not in err
    assert not shot.exists()


def test_a_screenshot_of_a_benchmark_with_background_work_ends_cleanly(tmp_path):
    """HalluSegBench starts the edit-leakage measure when it opens: the screenshot run lets it end
    (cancelled) before the process exits, instead of printing 'Signal source has been deleted'."""
    import os
    import subprocess
    import sys

    out = tmp_path / "hallu.png"
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from masklens.core.cli import main; sys.exit(main())",
         "gui", "--demo", "--kind", "hallusegbench", "--screenshot", str(out)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 0
    assert "Traceback" not in done.stderr and "Signal source" not in done.stderr, done.stderr
