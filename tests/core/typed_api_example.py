"""A notebook-style use of the typed entry points, written to type-check (mypy/pyright) as it
is: ``tests/core/test_api_kinds.py`` runs it, and type-checks it when a checker is installed."""

from __future__ import annotations

from pathlib import Path

import masklens.core as ml
from masklens.core.api_kinds import score_cafe, score_pcs
from masklens.core.scoring.contract import ScoreResult

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


def headline() -> tuple[int, float]:
    result: ScoreResult = score_cafe(ann=DEMO / "cafe/ann.json", pred=DEMO / "cafe/pred_demo.json",
                                     score_threshold=0.5, iou_threshold=0.3)
    overall = result.summary["Overall"]
    n, afpr = overall["N"], overall["AFPR"]
    assert isinstance(n, int) and isinstance(afpr, float)
    return n, afpr


def oracle() -> float | None:
    gold = [DEMO / f"pcs/gold_annotator_{i}.json" for i in (1, 2, 3)]
    value = score_pcs(gt=gold, pred=DEMO / "pcs/pred_demo.json").summary["all"]["cgF1"]
    return value if isinstance(value, float) else None


def misspelt() -> str:
    try:
        ml.score("cafe", ann=str(DEMO / "cafe/ann.json"), pred=str(DEMO / "cafe/pred_demo.json"),
                 score_treshold=0.3)
    except ml.MasklensError as exc:
        return str(exc)
    raise AssertionError("a misspelt keyword must be an error")


def every_public_name() -> list[object]:
    """Each name of ``masklens.core.__all__``, as a user's ``mypy --strict`` sees it."""
    return [ml.Benchmark, ml.PredictionSet, ml.Scorer, ml.ScoreResult, ml.get_kind, ml.kind_names,
            ml.load_benchmark, ml.load_predictions, ml.model_names, ml.predict, ml.score, ml.segmenter,
            ml.score_cafe, ml.score_cgebench, ml.score_hallusegbench, ml.score_ovs, ml.score_pcs,
            ml.score_r2sm, ml.MasklensError, ml.export, ml.__version__]
