"""Fixtures for fault tests: a real, tiny filesystem that fills up (tmpfs mounted for the test)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def tiny_fs(tmp_path):
    """A mounted tmpfs of 1 MiB (a real ENOSPC when it is full); skipped where mounting is
    not permitted (needs root or CAP_SYS_ADMIN)."""
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip() or r.returncode}")
    try:
        yield Path(mnt)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(folder: Path, leave: int = 0) -> None:
    """Fill the filesystem holding ``folder`` until fewer than ``leave`` bytes are free."""
    block = b"\0" * 4096
    with (folder / "filler").open("wb", buffering=0) as fh:
        try:
            while True:
                fh.write(block)
        except OSError:
            pass
    if leave:
        with (folder / "filler").open("r+b") as fh:
            fh.truncate(max(0, (folder / "filler").stat().st_size - leave))
