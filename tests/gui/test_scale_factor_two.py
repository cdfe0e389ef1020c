"""`QT_SCALE_FACTOR=2` on a 1920×1080 screen (960×540 logical pixels): the window's minimum size
fits, a larger saved window is cut to the screen, Reset layout stays within it, and the next
normal start gives the docks their widths back as the window widens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from masklens.gui.settings import Settings

SCREEN = '{"windowFrameMargins": false, "screens": [{"name": "desktop", "x": 0, "y": 0, "width": 1920, "height": 1080, "dpr": 1}]}'


def session(phase: str, settings: Path, tmp: Path, **env: str) -> dict:
    out = tmp / f"{phase}.json"
    screen = Path(tempfile.mkstemp(suffix=".json", dir=tmp)[1])
    screen.write_text(SCREEN)
    environ = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={screen}", **env}
    environ.pop("QT_SCALE_FACTOR", None) if "QT_SCALE_FACTOR" not in env else None
    got = subprocess.run([sys.executable, str(Path(__file__).with_name("scaled_session.py")), phase,
                          str(settings), str(out)], capture_output=True, text=True, timeout=300, env=environ)
    assert got.returncode == 0, got.stderr[-3000:]
    return json.loads(out.read_text())


def inside(r: list[int], area: list[int]) -> bool:
    return (r[0] >= area[0] and r[1] >= area[1] and r[0] + r[2] <= area[0] + area[2]
            and r[1] + r[3] <= area[1] + area[3])


@pytest.mark.slow
def test_scale_factor_two_fits_the_screen_and_the_docks_come_back(tmp_path):
    path = tmp_path / "gui-settings.json"
    earlier = Settings(window_rect=[0, 0, 1500, 950],
                       dock_widths={"dock-samples": 520, "dock-readout": 360, "dock-typed-prompts": 360,
                                    "dock-review": 360})
    earlier.save(path)  # a normal session's window, larger than 960×540
    scaled = session("scaled", path, tmp_path, QT_SCALE_FACTOR="2")
    area = scaled["screen"]
    assert area[2:] == [960, 540]
    assert scaled["minimum"][0] <= 960 and scaled["minimum"][1] <= 540, scaled
    assert inside(scaled["started"], area), scaled  # the saved 1500×950 is cut to the screen
    assert inside(scaled["status"], area), scaled  # the status bar is on screen
    assert inside(scaled["reset"], area), scaled
    normal = session("normal", path, tmp_path)
    assert normal["screen"][2:] == [1920, 1080]
    assert normal["samples_widened"] >= 500, normal  # the sample list's width is back
