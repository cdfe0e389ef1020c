"""`masklens score KIND --demo`: the bundled demo of the kind, without naming its files (what a
user of the desktop bundle, who has no checkout, can type)."""

from __future__ import annotations

import pytest

from masklens.core.cli import main
from masklens.core.kinds.demo import demo_argv


@pytest.mark.parametrize("kind", ["cafe", "pcs", "hallusegbench"])
def test_score_demo_equals_scoring_the_demo_files(kind, capsys):
    assert main(["score", kind, "--demo"]) == 0
    with_demo = capsys.readouterr().out
    assert main(["score", kind, *demo_argv(kind)]) == 0
    assert with_demo == capsys.readouterr().out
    assert with_demo.strip()


def test_score_without_files_or_demo_names_what_is_missing(capsys):
    assert main(["score", "cafe"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("masklens score cafe: error: the following arguments are required: "
                           "--ann, --pred (or --demo)")
