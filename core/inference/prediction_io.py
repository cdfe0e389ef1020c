"""Prediction sets on their way out: keep instances above a score, write a kind's prediction
format atomically (shared by `masklens predict` and the Python API)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from masklens.core.errors import MasklensError
from masklens.core.scoring.contract import BenchmarkKind

if TYPE_CHECKING:
    from masklens.core.files.output_dirs import Checked

#: the lowest score a prediction file keeps when no threshold is given: files keep low-scored
#: instances, and the scorer's t (and the window's slider) applies the threshold — as SA-Co's
#: own evaluation keeps every scored instance. The shipped demo predictions are made this way.
PREDICTION_SCORE_FLOOR = 0.05


def default_output_threshold(kind: BenchmarkKind, backend: str) -> float | None:
    """The score threshold `predict` and `evaluate` give backend ``backend`` when none is
    given: the floor, where the kind's files keep scores and the backend's own default is
    higher; None (the backend's default) otherwise: HalluSegBench's plain masks, replay (0),
    CLIPSeg (its mask threshold follows the score threshold), a backend whose factory takes
    no ``score_threshold``."""
    import inspect

    from masklens.core.models.registry import _resolve

    info, factory = _resolve(backend)
    params = inspect.signature(factory).parameters
    takes = "score_threshold" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    if not kind.scored_predictions or not info.threshold_only_filters or not takes:
        return None
    default = info.default_score_threshold
    return PREDICTION_SCORE_FLOOR if default > PREDICTION_SCORE_FLOOR else None


def keep_scored(predictions: Any, threshold: float) -> Any:
    """A copy of a PredictionSet keeping only instances scored >= threshold (inclusive)."""
    from masklens.core.schema import Prediction, PredictionSet

    out = PredictionSet(name=predictions.name, missing=set(predictions.missing),
                        provenance={**predictions.provenance, "output_score_threshold": threshold})
    for pid, p in predictions.by_prompt.items():
        out.by_prompt[pid] = Prediction(pid, [i for i in p.instances if i.score >= threshold],
                                        p.presence, p.provenance)
    return out


def check_output(out: Path, inputs: Iterable[Any] = ()) -> Checked | None:
    """Refuse, before any work, an existing folder ``out`` that masklens did not write or that
    holds ``inputs`` (masklens.core.files.output_dirs); a file or device is checked on writing.
    Returns the folder as it was accepted (None: ``out`` is no folder)."""
    from masklens.core.files.output_dirs import check_replaceable, holds_inputs

    if Path(out).is_dir():
        return check_replaceable(out, inputs=inputs)
    if (held := holds_inputs(out, inputs)) is not None:
        raise MasklensError(f"is this run's input {held}; not writing over it", path=out,
                            hint="write the output to another file")
    return None


def write_atomically(kind: BenchmarkKind, benchmark: Any, predictions: Any, out: Path,
                     inputs: Iterable[Any] = ()) -> list[Path]:
    """``kind.write_predictions`` into a temporary sibling, then moved onto ``out`` in one step
    (a file or a whole folder), so an interrupted write never leaves a half-written output.
    An existing folder is replaced only when masklens wrote it and it holds none of ``inputs``
    (nor the benchmark's files); a device or pipe ``out`` (``/dev/null``) is written to, not
    renamed over. Staging folders left beside ``out`` by a killed run are removed first; errors
    name ``out``."""
    import os
    import shutil

    from masklens.core.files.io import (
        cannot_write,
        is_special_file,
        named_after_output,
        replace_folder,
        temp_sibling_dir,
        write_into_special,
    )
    from masklens.core.files.output_dirs import check_replaceable, write_marker

    out = out.absolute()
    inputs = [*inputs, *getattr(benchmark, "sources", {}).values()]
    checked = check_output(out, inputs)
    tmp = temp_sibling_dir(out)
    try:
        staged = tmp / out.name
        written = kind.write_predictions(benchmark, predictions, staged)
        if staged.is_dir():
            write_marker(staged, "predictions")
        if is_special_file(out):
            if staged.is_dir():
                raise MasklensError("is a device or pipe, not a folder; not writing a folder there",
                                    path=out)
            write_into_special(out, staged.read_bytes())
            return [out]
        if staged.is_dir() and out.is_dir():
            check_replaceable(out, inputs=inputs, since=checked)  # nothing of the user's arrived meanwhile
            replace_folder(staged, out)
        elif staged.exists():
            if out.is_dir() and not staged.is_dir():
                raise MasklensError("the output is a folder but this benchmark writes a file", path=out)
            os.replace(staged, out)
        else:
            raise MasklensError(f"{kind.name} wrote nothing at the output path", path=out)
    except MasklensError as exc:
        raise named_after_output(exc, tmp, out) from None
    except OSError as exc:
        raise cannot_write(out, exc) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def final(w: Path) -> Path:
        try:
            return out / Path(w).relative_to(staged)
        except ValueError:
            return Path(w)

    return [final(w) for w in written]
