"""`masklens gui` without a display says what to do instead of Qt's plugin abort."""

import os
import subprocess
import sys

import pytest


@pytest.mark.skipif(sys.platform != "linux", reason="the display check is for Linux")
def test_gui_without_display_is_one_clear_message(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["MASKLENS_CONFIG_DIR"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-m", "masklens.core", "gui", "--demo"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "no display found" in out.stderr and "--screenshot" in out.stderr
    assert "Traceback" not in out.stderr
