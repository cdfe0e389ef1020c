"""Cancel inside one long linear layer: its rows computed in blocks with the cancel check between.

After attention cores are split (:mod:`masklens.core.models.attention_split`), the longest pieces
of a real-size pass on a CPU are single ``nn.Linear`` calls over thousands of tokens — OWLv2-L's
MLP ``fc1`` at 960 px (4,761 × 1,024 → 4,096, 20 G multiply-adds), SAM 2.1 Hiera-L's first
``qkv`` (65,536 tokens), SAM 3's MLP. :func:`make_splittable` gives a plain ``nn.Linear`` a
forward that, while the calling thread has a cancel check installed and the call is long, runs
``F.linear`` over blocks of rows (the leading dimensions flattened) and writes them into one
output; each output row depends only on its input row, and blocks are whole multiples of
:data:`ROW_ALIGN` rows, so the result is bitwise equal to the whole call (tested at real size
and on the tiny models). Without a check, off the CPU, or on a non-contiguous input it is the
plain call.
"""

from __future__ import annotations

import types
from typing import Any

from masklens.core.models.interrupt import current_check

#: a call is split only over this many multiply-adds (~0.1-0.2 s on two free CPU cores; shorter
#: calls are not worth the blocks' overhead), in blocks of about BLOCK_MACS
SPLIT_MACS = 4e9
#: multiply-adds of one block: 1 G is ~20-50 ms of work on two CPU cores
BLOCK_MACS = 1e9
#: blocks are whole multiples of this many rows (the input's leading dimensions flattened, as the
#: BLAS sees them): row-wise results of a CPU matrix product depend on where a row falls in the
#: kernel's row tiles (blocks of 16, 17, 33 or 41 rows, or a one-row tail, change the last bits —
#: measured); 768 = 2⁸·3 is a multiple of the usual tile heights (powers of two to 256, 6, 12,
#: 24, 48), so a row should keep its tile position — exact at every real-size shape tried, an
#: empirical finding (tests, tests/benchmarks/bench_cancel_gaps.py), not a documented BLAS promise
ROW_ALIGN = 768
_MARK = "_masklens_split_rows"


def make_splittable(module: Any) -> bool:
    """Give the plain ``torch.nn.Linear`` ``module`` the block-wise forward (once); subclasses
    (quantised, LoRA) and other modules are left alone. True when ``module`` has it."""
    import torch

    if type(module) is not torch.nn.Linear:
        return False
    if not getattr(module, _MARK, False):
        # a bound method (an instance attribute: the class is untouched; deepcopy re-binds it)
        module.forward = types.MethodType(_forward, module)  # type: ignore[method-assign]  # per instance, as said above
        object.__setattr__(module, _MARK, True)
    return True


def _forward(module: Any, x: Any) -> Any:
    """``F.linear(x, weight, bias)``, block-wise while a cancel check is installed and it is long."""
    import torch
    import torch.nn.functional as F

    check = current_check()
    weight, bias = module.weight, module.bias
    if check is None:  # every linear call of a pass without Cancel (command line, GPU runs): nothing more
        return F.linear(x, weight, bias)
    rows = x.numel() // max(x.shape[-1], 1) if x.dim() >= 2 else 0
    macs = rows * module.in_features * module.out_features
    if x.device.type != "cpu" or not x.is_contiguous() \
            or macs <= max(SPLIT_MACS, BLOCK_MACS) or rows < 2 * ROW_ALIGN \
            or weight.dtype != x.dtype or (bias is not None and bias.dtype != x.dtype) \
            or torch.is_autocast_enabled("cpu"):
        return F.linear(x, weight, bias)
    block = max(1, int(rows * BLOCK_MACS // macs) // ROW_ALIGN) * ROW_ALIGN
    flat = x.view(rows, x.shape[-1])  # what F.linear hands the BLAS for the whole call
    out = x.new_empty((rows, module.out_features))
    for start in range(0, rows, block):
        if start:
            check()
        # F.linear on 2-D input is addmm(bias, x, weight.t()) (mm without a bias): the same
        # product, written in place (no second copy of a large output)
        part, into = flat[start:start + block], out[start:start + block]
        if bias is None:
            torch.mm(part, weight.t(), out=into)
        else:
            torch.addmm(bias, part, weight.t(), out=into)
    return out.view(*x.shape[:-1], module.out_features)
