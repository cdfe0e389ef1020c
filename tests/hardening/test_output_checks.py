"""The second check of an output folder (just before the new one is put in place) compares the
folder's listing with the first check instead of reading every file again; anything changed
since, a rewritten file or a user's file that arrived meanwhile, is still refused."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from masklens.core.errors import MasklensError
from masklens.core.files.io import atomic_directory
from masklens.core.files.output_dirs import Checked, check_replaceable, write_marker
from masklens.core.inference.prediction_io import write_atomically


def _own_folder(out: Path) -> None:
    out.mkdir()
    (out / "a.txt").write_text("first")
    (out / "sub").mkdir()
    (out / "sub" / "b.bin").write_bytes(b"x" * 100)
    write_marker(out, "report")


def _as_if_written_long_before(checked: Checked) -> Checked:
    """``checked`` as if the folder had been written well before the run (outside the window in
    which a change may keep the same timestamps)."""
    return replace(checked, taken_ns=checked.taken_ns + 60 * 10**9)


def test_a_recheck_of_an_unchanged_folder_accepts_the_first_check(tmp_path):
    out = tmp_path / "out"
    _own_folder(out)
    first = _as_if_written_long_before(check_replaceable(out))
    assert check_replaceable(out, since=first) is first
    just_written = check_replaceable(out)  # changed moments ago: read again in full
    assert check_replaceable(out, since=just_written) is not just_written


@pytest.mark.parametrize("long_before", [True, False])
def test_a_file_rewritten_with_its_size_and_mtime_is_still_refused(tmp_path, long_before):
    out = tmp_path / "out"
    _own_folder(out)
    first = check_replaceable(out)
    if long_before:
        first = _as_if_written_long_before(first)
    st = (out / "a.txt").stat()
    (out / "a.txt").write_text("FIRST")  # same size
    os.utime(out / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns))  # the mtime set back
    with pytest.raises(MasklensError, match="changed since masklens wrote it"):
        check_replaceable(out, since=first)


def test_a_users_file_arriving_during_the_write_is_kept(tmp_path):
    out = tmp_path / "out"
    _own_folder(out)
    first = check_replaceable(out)
    with pytest.raises(MasklensError, match="did not write"), atomic_directory(out, checked=first) as d:
        (d / "a.txt").write_text("second")
        (out / "sub" / "thesis.tex").write_text("mine")
    assert (out / "sub" / "thesis.tex").read_text() == "mine"
    assert (out / "a.txt").read_text() == "first"


def test_predictions_never_replace_a_folder_a_user_wrote_into_meanwhile(tmp_path):
    out = tmp_path / "preds"
    out.mkdir()
    (out / "old.json").write_text("{}")
    write_marker(out, "predictions")

    class Kind:
        name = "k"

        def write_predictions(self, benchmark, predictions, staged):
            staged.mkdir()
            (staged / "new.json").write_text("{}")
            (out / "notes.txt").write_text("mine")  # the user, while the model ran
            return [staged / "new.json"]

    with pytest.raises(MasklensError, match="did not write"):
        write_atomically(Kind(), None, None, out)
    assert sorted(p.name for p in out.iterdir() if p.name != ".masklens-output.json") == ["notes.txt", "old.json"]
