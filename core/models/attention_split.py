"""Cancel inside one attention: the model's own attention function run over groups of heads.

The forward pre-hooks of :mod:`masklens.core.models.interrupt` stop a pass between submodules,
but one attention module of a real-size model on a CPU (OWLv2-L at 960 px: 16 heads over 4,761
tokens) runs its core — QKᵀ, softmax, AV — in one call of about a second. In transformers 5 that
core is the function ``ALL_ATTENTION_FUNCTIONS.get_interface(implementation, eager_default)``
returns (SDPA, or the model's own eager function). :func:`install` wraps that look-up once per
process: while the calling thread has a cancel check installed (:func:`~masklens.core.models.
interrupt.cancel_check`) and the attention is long, the returned function runs the model's own
function over groups of heads, calling the check between groups, and concatenates the groups'
outputs. Heads are independent, so the result is bitwise equal to the whole call (tested on every
backend's model). A thread without a check — the command line, the plain pipelines — gets the
model's function itself, untouched. Tensors off the CPU are never split (on a GPU the whole core
lasts milliseconds). Nothing here imports torch or transformers at module import time.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

from masklens.core.models.interrupt import current_check

#: a core is split only over this many multiply-adds (QKᵀ plus AV; ~0.2-0.4 s on two free CPU
#: cores): splitting shorter ones costs more than it saves
SPLIT_MACS = 8e9
#: multiply-adds (QKᵀ plus AV) of one group of heads at most (one head at least): at ~20-50 G/s
#: on two CPU cores, 2 G is 40-100 ms of work between two cancel checks
GROUP_MACS = 2e9
#: fewer queries than this are never split: CPU SDPA then gives one head a single work item, which
#: runs outside the parallel region with another rounding (measured: q < 32 with 2 threads);
#: from 64 queries every group keeps at least two work items and the split is bitwise exact
MIN_QUERIES = 64
#: attribute set on the attention interface once its look-up is wrapped
_MARK = "_masklens_split_heads"


def install() -> bool:
    """Wrap transformers' attention look-up (process-wide, once); False when transformers' model
    code is not imported (nothing to wrap)."""
    modeling_utils = sys.modules.get("transformers.modeling_utils")
    interface = getattr(modeling_utils, "ALL_ATTENTION_FUNCTIONS", None)
    if interface is None:
        return False
    if getattr(interface, _MARK, False):
        return True
    original = interface.get_interface

    @functools.wraps(original)
    def get_interface(attn_implementation: str, default: Callable) -> Callable:
        function = original(attn_implementation, default)
        if current_check() is None:
            return function
        return functools.partial(split_heads, function)

    interface.get_interface = get_interface  # an instance attribute: the class is untouched
    object.__setattr__(interface, _MARK, True)
    return True


def head_groups(query: Any, key: Any, budget: float | None = None) -> int:
    """How many heads one group holds for ``query`` (batch, heads, q, dim) against ``key``: all of
    them (no split) when the whole core is within ``budget`` multiply-adds (default
    :data:`GROUP_MACS`), else as many as fit, at least one."""
    budget = GROUP_MACS if budget is None else budget
    batch, heads, q_len, dim = query.shape
    per_head = 2 * batch * q_len * key.shape[-2] * max(dim, 1)
    if per_head * heads <= budget:
        return heads
    return max(1, int(budget // per_head))


def _splittable(query: Any, key: Any, value: Any) -> bool:
    return (query.dim() == 4 and key.dim() == 4 and value.dim() == 4
            and query.device.type == "cpu" and query.shape[2] >= MIN_QUERIES
            and key.shape[1] == query.shape[1] == value.shape[1])  # no grouped key/value heads


def _heads_of(tensor: Any, heads: int, part: slice) -> Any:
    """``tensor``'s heads ``part`` when it has a head per query head (dim 1), else itself
    (a mask broadcast over heads)."""
    if tensor is None or getattr(tensor, "dim", lambda: 0)() != 4 or tensor.shape[1] != heads:
        return tensor
    return tensor[:, part]


def split_heads(function: Callable, module: Any, query: Any, key: Any, value: Any,
                *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``function(module, query, key, value, …)`` (a transformers attention function: output
    (batch, q, heads, dim), weights (batch, heads, q, k) or None) computed over groups of heads,
    with the thread's cancel check before every group after the first; whole when short."""
    check = current_check()
    if check is None or not _splittable(query, key, value):
        return function(module, query, key, value, *args, **kwargs)
    heads = query.shape[1]
    group = head_groups(query, key)
    whole = 2 * query.shape[0] * heads * query.shape[2] * key.shape[-2] * query.shape[3]
    if group >= heads or whole <= SPLIT_MACS:
        return function(module, query, key, value, *args, **kwargs)
    output = weights = None
    for start in range(0, heads, group):
        if start:
            check()
        part = slice(start, min(start + group, heads))
        part_args = tuple(_heads_of(arg, heads, part) for arg in args)
        part_kwargs = {name: _heads_of(arg, heads, part) if name in ("attention_mask", "position_bias")
                       else arg for name, arg in kwargs.items()}
        part_output, part_weights = function(module, query[:, part], key[:, part], value[:, part],
                                             *part_args, **part_kwargs)
        # written into one contiguous tensor (torch.cat may pick another memory format)
        if output is None:
            output = part_output.new_empty(_with_heads(part_output.shape, 2, heads))
            if part_weights is not None:
                weights = part_weights.new_empty(_with_heads(part_weights.shape, 1, heads))
        output[:, :, part] = part_output
        if weights is not None:
            weights[:, part] = part_weights
    return output, weights


def _with_heads(shape: Any, dim: int, heads: int) -> tuple[int, ...]:
    return (*shape[:dim], heads, *shape[dim + 1:])
