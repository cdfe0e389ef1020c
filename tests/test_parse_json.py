"""read_json parses with orjson yet reads every file exactly as ``json`` does:
same values and types, NaN/Infinity and integers beyond 64 bits included, same errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from masklens.core.errors import DataFormatError
from masklens.core.files.io import parse_json, read_json

scalars = (
    st.none() | st.booleans() | st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(-(2**80), 2**80) | st.text(max_size=20)
)  # fmt: skip
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from([None, 1, 2]), st.booleans())
def test_parse_json_reads_as_json(value, indent, ascii_only) -> None:
    raw = json.dumps(value, indent=indent, ensure_ascii=ascii_only).encode()
    assert same(parse_json(raw), json.loads(raw))


@pytest.mark.parametrize(
    "raw",
    [b"18446744073709551616", b"[1, -9223372036854775809]", b'{"a":\n 99999999999999999999999}',
     b"-18446744073709551615", b"NaN", b"[Infinity, -Infinity]", b'"\\ud800"',
     b'\xef\xbb\xbf{"a": 1}', b"1e400", b"-0.0", b'{"a": 1, "a": 2}',
     b'{"counts": ":0000000000000000000000000"}'],
)  # fmt: skip
def test_inputs_orjson_reads_differently(raw) -> None:
    assert same(parse_json(raw), json.loads(raw))


@pytest.mark.parametrize("raw", [b"[1, 2", b'{"a" 1}', b"", b"[1] x"])
def test_malformed_files_name_line_and_column(tmp_path, raw) -> None:
    p = tmp_path / "bad.json"
    p.write_bytes(raw)
    with pytest.raises(DataFormatError) as err:
        read_json(p)
    try:
        json.loads(raw)
    except json.JSONDecodeError as exc:
        assert f"line {exc.lineno}, column {exc.colno}: {exc.msg}" in str(err.value)
    assert "bad.json" in str(err.value)


@pytest.mark.parametrize(
    "raw",
    [b"9223372036854775807", b"9223372036854775808", b"18446744073709551615", b"-9223372036854775808",
     b"[[-9223372036854775809]]", b'{"a": [1.0e19, 2]}', b"-9.3e18", b"[9.2e18, 1e400]",
     b'[{"a": {"b": [18446744073709551616]}}]', b"12345678901234567890123.0"],
)  # fmt: skip
def test_integers_around_64_bits_read_as_json(tmp_path, raw) -> None:
    """orjson reads an integer beyond 64 bits as a float (of magnitude >= 2**63): such a value
    is read again by json, at any depth; read_json gives json's value too."""
    assert same(parse_json(raw), json.loads(raw))
    p = tmp_path / "a.json"
    p.write_bytes(raw)
    assert same(read_json(p), json.loads(raw))


def test_a_big_file_under_an_address_space_limit_gives_a_clear_answer_not_a_crash(tmp_path):
    """orjson segfaults when an allocation fails (found by `make fuzz`: a 200 MB list of zeros
    under a 3 GB `ulimit -v`); there such a file goes to json: the command answers or says
    there is not enough memory, with exit status 0 or 2, never a signal."""
    import resource
    import subprocess
    import sys

    from masklens.core.files.io import orjson_can_allocate

    DEMO = Path(__file__).resolve().parents[1] / "resources" / "demo" / "cafe"
    assert orjson_can_allocate(1 << 20)
    pred = tmp_path / "pred.json"
    with pred.open("wb") as fh:  # the demo's predictions with a 200 MB list in an extra field (the fuzz case)
        head = json.loads((DEMO / "pred_demo.json").read_text())
        head[0]["padding"] = "__BIG__"
        a, b = json.dumps(head).split('"__BIG__"')
        fh.write(a.encode() + b"[")
        for _ in range(200):
            fh.write(b"0," * (1 << 19))
        fh.write(b"0]" + b.encode())
    cap = 3 << 30  # 3 GB of address space, as `make fuzz`: 200 MB x 32 does not fit, so json reads it

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    argv = [sys.executable, "-m", "masklens", "score", "cafe", "--ann", str(DEMO / "ann.json"),
            "--pred", str(pred)]
    proc = subprocess.run(argv, preexec_fn=limit, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 2), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 0 or "not enough memory" in proc.stderr
