"""Cancel inside Grounding DINO's multi-scale deformable attention: its queries in blocks.

Grounding DINO's encoder runs ``MultiScaleDeformableAttention`` (transformers' pure-torch version:
one ``grid_sample`` per feature level, then a weighted sum per query) over every position of every
feature level — about 20,000 queries for an 800×1200 input — in one call with no submodule inside
it: the longest piece of its pass on the CPU.
:func:`make_splittable` gives that module a forward that, while the calling thread has a cancel
check installed and the call has over ``2 × QUERY_BLOCK`` queries on the CPU, runs the module's
own forward over blocks of queries (each query's output depends only on its own sampling
locations and weights) with the check between blocks, and writes them into one output — bitwise
equal to the whole call (tested at real size and on the tiny model).
"""

from __future__ import annotations

import types
from typing import Any

from masklens.core.models.interrupt import current_check

#: queries per block (20,000 queries at 1.9 s: ~0.2 s a block under load)
QUERY_BLOCK = 2048
_MARK = "_masklens_split_queries"


def make_splittable(module: Any) -> bool:
    """Give a transformers ``MultiScaleDeformableAttention`` the block-wise forward (once)."""
    cls = type(module)
    if cls.__name__ != "MultiScaleDeformableAttention" or not cls.__module__.startswith("transformers."):
        return False
    if not getattr(module, _MARK, False):
        module.forward = types.MethodType(_forward, module)  # an instance attribute
        object.__setattr__(module, _MARK, True)
    return True


def _forward(module: Any, value: Any, spatial_shapes: Any, spatial_shapes_list: Any,
             level_start_index: Any, sampling_locations: Any, attention_weights: Any,
             im2col_step: int) -> Any:
    """The class's forward, over blocks of queries while a cancel check is installed."""
    whole = type(module).forward
    queries = sampling_locations.shape[1]
    check = current_check()
    if check is None or value.device.type != "cpu" or queries <= 2 * QUERY_BLOCK:
        return whole(module, value, spatial_shapes, spatial_shapes_list, level_start_index,
                     sampling_locations, attention_weights, im2col_step)
    out = None
    for start in range(0, queries, QUERY_BLOCK):
        if start:
            check()
        part = whole(module, value, spatial_shapes, spatial_shapes_list, level_start_index,
                     sampling_locations[:, start:start + QUERY_BLOCK],
                     attention_weights[:, start:start + QUERY_BLOCK], im2col_step)
        if out is None:
            out = part.new_empty((part.shape[0], queries, *part.shape[2:]))
        out[:, start:start + part.shape[1]] = part
    return out
