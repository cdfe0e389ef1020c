"""One typed entry point per built-in benchmark kind: ``score_cafe(ann=…, pred=…,
score_threshold=…)`` and so on, whose real signatures ``inspect.signature``, ``help()``, tab
completion and type checkers see (``score(kind, **kwargs)`` takes the same keywords for any
kind, including plug-ins). Each is exactly :func:`masklens.core.api.score` for its kind;
``tests/core/test_api_kinds.py`` holds the signatures to the kinds' own arguments and defaults.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from masklens.core.scoring.contract import ScoreResult

#: a file or folder argument: a path, or an ``hf://`` path
PathArg = str | os.PathLike[str]


def _score(kind: str, given: dict[str, Any]) -> ScoreResult:
    from masklens.core.api import score

    out, pretty = given.pop("out"), given.pop("pretty")
    return score(kind, out=out, pretty=pretty, **{k: v for k, v in given.items() if v is not None})


def score_cafe(*, ann: PathArg, pred: PathArg, images: PathArg | None = None,
               score_threshold: float = 0.5, iou_threshold: float = 0.3,
               out: PathArg | None = None, pretty: bool = False) -> ScoreResult:
    """CAFE, as ``masklens score cafe``: ``ann`` the annotation JSON, ``pred`` the COCO results;
    instances with score ≥ ``score_threshold`` are accepted, IoU ≥ ``iou_threshold`` aligns."""
    return _score("cafe", dict(locals()))


def score_pcs(*, gt: PathArg | Sequence[PathArg], pred: PathArg, images: PathArg | None = None,
              score_threshold: float = 0.5,
              out: PathArg | None = None, pretty: bool = False) -> ScoreResult:
    """SA-Co/Gold (cgF1), as ``masklens score pcs``: ``gt`` one annotator file or a list of
    them (the 3-annotator oracle), ``pred`` the COCO results."""
    return _score("pcs", dict(locals()))


def score_hallusegbench(*, data: PathArg, pred_dir: PathArg, root: PathArg | None = None,
                        alpha: float = 3.0,
                        out: PathArg | None = None, pretty: bool = False) -> ScoreResult:
    """HalluSegBench, as ``masklens score hallusegbench``: ``data`` the data.json, ``pred_dir``
    the folder of the four prediction folders, ``root`` the base of data.json's paths."""
    return _score("hallusegbench", dict(locals()))


def score_cgebench(*, ann: PathArg, pred: PathArg, images: PathArg | None = None,
                   score_threshold: float = 0.5,
                   out: PathArg | None = None, pretty: bool = False) -> ScoreResult:
    """CGEBench, as ``masklens score cgebench``."""
    return _score("cgebench", dict(locals()))


def score_r2sm(*, ann: PathArg, pred: PathArg, images: PathArg | None = None,
               score_threshold: float = 0.0,
               out: PathArg | None = None, pretty: bool = False) -> ScoreResult:
    """R2SM, as ``masklens score r2sm`` (``score_threshold`` applies to gIoU/cIoU; AP ranks all)."""
    return _score("r2sm", dict(locals()))


def score_ovs(*, ann: PathArg, pred: PathArg, av_threshold: float = 0.7,
              out: PathArg | None = None, pretty: bool = False) -> ScoreResult:
    """The mask-wise OVS protocol, as ``masklens score ovs``."""
    return _score("ovs", dict(locals()))


#: kind name -> its entry point
SCORE_BY_KIND = {"cafe": score_cafe, "pcs": score_pcs, "hallusegbench": score_hallusegbench,
                 "cgebench": score_cgebench, "r2sm": score_r2sm, "ovs": score_ovs}

__all__ = ["PathArg", *(f.__name__ for f in SCORE_BY_KIND.values())]
