"""Prediction cache entries are read as untrusted input: an entry another process (a shared or
NFS cache, an old or edited file) wrote wrongly is ignored with one warning and computed again,
never decoded (SIGSEGV, hangs) and never passed on to the output. Real SQLite, the real CLI."""

from __future__ import annotations

import json
import sqlite3

import pytest

from masklens.core.cli import main
from masklens.core.kinds.demo import demo_argv

GOOD = {"v": 1, "masks": [{"size": [2, 3], "counts": "06"}], "scores": [0.5], "presence": None,
        "provenance": {}}

BAD = {
    "huge mask": {**GOOD, "masks": [{"size": [100000, 100000], "counts": "0"}]},
    "negative size": {**GOOD, "masks": [{"size": [-4, 3], "counts": "06"}]},
    "garbage counts": {**GOOD, "masks": [{"size": [2, 3], "counts": "zzzz~~~~"}]},
    "runs off the mask": {**GOOD, "masks": [{"size": [2, 3], "counts": "0a0"}]},
    "deep provenance": {**GOOD, "provenance": "DEEP"},  # the text is made deep below
    "one score short": {**GOOD, "scores": []},
    "NaN score": {**GOOD, "scores": ["nan"]},
    "not an object": [1, 2],
}


def test_a_sound_entry_reads_back():
    from masklens.core.cache.entries import parse_entry

    result = parse_entry(json.dumps(GOOD))
    assert result.masks[0].shape == (2, 3) and result.scores == [0.5]
    assert int(result.masks[0].area) == 6


def _text(name: str) -> str:
    return json.dumps(BAD[name]).replace('"DEEP"', "[" * 100000 + "]" * 100000)


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_entries_are_refused_with_a_reason(name):
    from masklens.core.cache.entries import BadEntry, parse_entry

    with pytest.raises(BadEntry):
        parse_entry(_text(name))


def _predict(tmp_path, out_name):
    out = tmp_path / out_name
    rc = main(["predict", "cafe", "--model", "demo", *demo_argv("cafe", with_predictions=False),
               "--cache-dir", str(tmp_path / "cache"), "--quiet", "--out", str(out)])
    return rc, out


def test_predict_ignores_bad_cache_entries_warns_once_and_recomputes(tmp_path, capsys):
    rc, first = _predict(tmp_path, "first.json")
    assert rc == 0, capsys.readouterr().err
    capsys.readouterr()
    db = sqlite3.connect(tmp_path / "cache" / "predictions.sqlite3")
    keys = [k for (k,) in db.execute("SELECT key FROM predictions ORDER BY key")]
    assert len(keys) >= len(BAD) + 1
    texts = [_text(name) for name in BAD]
    for key, text in zip(keys, [*texts, b"\x00binary"], strict=False):
        db.execute("UPDATE predictions SET result = ? WHERE key = ?", (text, key))
    db.commit()
    db.close()
    rc, second = _predict(tmp_path, "second.json")
    err = capsys.readouterr().err
    assert rc == 0, err
    assert err.count("invalid prediction cache entry") == 1 and "Traceback" not in err
    assert json.loads(second.read_text()) == json.loads(first.read_text())
    # recomputed entries replaced the bad ones: a third run reads them all, silently
    rc, third = _predict(tmp_path, "third.json")
    assert rc == 0 and "invalid" not in capsys.readouterr().err
    assert json.loads(third.read_text()) == json.loads(first.read_text())


def test_the_cached_json_text_is_made_a_mask_at_a_time(monkeypatch):
    """json.dumps holds the GIL for a whole call (~50 ms for 100 masks of an 1800×1200 image): the
    prediction cache's text is made one mask per call and is the very same text."""
    import json

    import numpy as np

    from masklens.core.cache.entries import result_json_text, result_to_json
    from masklens.core.masks import Mask
    from masklens.core.models.base import SegmentResult

    rng = np.random.default_rng(5)
    result = SegmentResult(masks=[Mask.from_array(rng.random((20, 30)) > 0.5) for _ in range(5)],
                           scores=[0.9, 0.5, 0.25, 0.125, 0.0], presence=0.75,
                           provenance={"model": "x", "boxes": [[1.5, 2.0, 3.0, 4.0]], "note": "é\"q"})
    whole = json.dumps(result_to_json(result), separators=(",", ":"), allow_nan=False)
    sizes = []
    dumps = json.dumps
    monkeypatch.setattr(json, "dumps", lambda v, **k: sizes.append(
        len(v["masks"]) if isinstance(v, dict) and "masks" in v else 1) or dumps(v, **k))
    text = result_json_text(result)
    assert text == whole
    assert sizes and max(sizes) == 1  # never the whole list of masks in one call
    result.scores[0] = float("nan")
    with pytest.raises(ValueError):
        result_json_text(result)
