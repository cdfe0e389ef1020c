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
