"""masklens.core: the headless half of masklens (scorer, loaders, models, caches, review, reports).

Nothing in this package imports Qt, and heavy libraries (torch, transformers, sam2)
are imported lazily inside the functions that need them.

The Python API (:mod:`masklens.core.api`) is available from here, imported on first use::

    import masklens.core as ml
    r = ml.score("cafe", ann="ann.json", pred="pred.json", score_threshold=0.5)
"""

from __future__ import annotations

#: ``typing.TYPE_CHECKING`` without importing typing: the ``masklens`` program imports this
#: package first, and Ctrl+C is only its own once masklens.core.cli has run its first lines
TYPE_CHECKING = False

if TYPE_CHECKING:  # what a type checker sees (``name as name``: an explicit re-export)
    from typing import Any

    from masklens.core.api import Benchmark as Benchmark
    from masklens.core.api import PredictionSet as PredictionSet
    from masklens.core.api import Scorer as Scorer
    from masklens.core.api import ScoreResult as ScoreResult
    from masklens.core.api import get_kind as get_kind
    from masklens.core.api import kind_names as kind_names
    from masklens.core.api import load_benchmark as load_benchmark
    from masklens.core.api import load_predictions as load_predictions
    from masklens.core.api import model_names as model_names
    from masklens.core.api import predict as predict
    from masklens.core.api import score as score
    from masklens.core.api import segmenter as segmenter
    from masklens.core.api_kinds import score_cafe as score_cafe
    from masklens.core.api_kinds import score_cgebench as score_cgebench
    from masklens.core.api_kinds import score_hallusegbench as score_hallusegbench
    from masklens.core.api_kinds import score_ovs as score_ovs
    from masklens.core.api_kinds import score_pcs as score_pcs
    from masklens.core.api_kinds import score_r2sm as score_r2sm
    from masklens.core.errors import MasklensError as MasklensError
    from masklens.core.interop.export import export as export

    __version__: str

_API = frozenset({
    "Benchmark", "PredictionSet", "ScoreResult", "Scorer", "get_kind", "kind_names", "load_benchmark",
    "load_predictions", "model_names", "predict", "score", "segmenter",
})

_KIND_API = frozenset({"score_cafe", "score_pcs", "score_hallusegbench", "score_cgebench", "score_r2sm",
                       "score_ovs"})

__all__ = sorted(_API | _KIND_API | {"__version__", "export", "MasklensError"})


def _version() -> str:
    """The installed distribution's version (pyproject.toml is its only source)."""
    from importlib import metadata

    try:
        return metadata.version("masklens")
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:  # PEP 562: the API is imported on first use, not with the package
    value: Any
    if name == "export":
        from masklens.core.interop import export as export_module

        value = export_module.export
    elif name == "MasklensError":
        from masklens.core import errors

        value = errors.MasklensError
    elif name in _KIND_API:
        from masklens.core import api_kinds

        value = getattr(api_kinds, name)
    elif name in _API:
        from masklens.core import api

        value = getattr(api, name)
    elif name == "__version__":
        value = _version()
    else:
        raise AttributeError(f"module 'masklens.core' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
