"""core.prediction_check: a prediction file of another benchmark is told apart before scoring."""

from __future__ import annotations

import pytest

from masklens.core.errors import DataFormatError
from masklens.core.scoring.prediction_check import (
    check_foreign_fields,
    result_key_owners,
    unmatched_message,
)


def test_kinds_declare_their_result_keys():
    owners = result_key_owners()
    assert owners["level"] == "CGEBench" and owners["query_id"] == "R2SM"


def test_foreign_key_field_of_most_records_is_refused(tmp_path):
    recs = [{"image_id": i, "level": i % 4, "score": 0.5} for i in range(10)]
    with pytest.raises(DataFormatError) as e:
        check_foreign_fields(tmp_path / "p.json", recs, ("image_id",))
    assert "CGEBench" in str(e.value) and "p.json" in str(e.value) and "'level'" in str(e.value)
    check_foreign_fields(tmp_path / "p.json", recs, ("image_id", "level"))  # its own kind reads it


def test_a_few_stray_fields_are_not_a_foreign_file(tmp_path):
    recs = [{"image_id": i, "score": 0.5} for i in range(10)] + [{"image_id": 1, "query_id": 3}] * 4
    check_foreign_fields(tmp_path / "p.json", recs, ("image_id",))  # 4 of 14: not most


def test_unmatched_message_counts_and_hints():
    recs = [{"image_id": i} for i in range(10)]
    assert unmatched_message(recs, lambda r: r["image_id"] < 8).startswith("2 of 10 records")
    text = unmatched_message(recs, lambda r: r["image_id"] < 3)
    assert text.startswith("7 of 10 records") and "another benchmark" in text
