"""Cancel inside one attention core: heads run in groups with the cancel check between them.

One attention module of OWLv2-L at 960 px computes 16 heads over 4,761 tokens in one call of about
a second on two CPU cores, with no submodule (so no cancel hook) inside it. masklens runs the
model's own attention function over groups of heads when a cancel check is installed. These tests
prove the split result is bitwise equal to the whole call for every backend's transformers model
(SDPA and eager), and that Cancel raised during a slow attention core stops it part-way, keeps
nothing and leaves the next run exact.
"""

from __future__ import annotations

import sys
import time
from collections import Counter

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from masklens.core.errors import Cancelled  # noqa: E402
from masklens.core.models import attention_split, deformable_split, linear_split  # noqa: E402
from masklens.core.models.base import SegmentRequest  # noqa: E402
from masklens.core.models.interrupt import cancel_check, make_interruptible  # noqa: E402
from masklens.core.models.registry import create_segmenter  # noqa: E402


def _inputs(kind: str) -> dict:
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(3, 20, (1, 6), generator=g)
    pixels = {"owlv2": WIDE, "clipseg": WIDE, "sam2": 128, "sam3": 112, "grounding-dino": 98}[kind]
    out = {"pixel_values": torch.randn(1, 3, pixels, pixels, generator=g)}
    if kind == "sam2":
        out.update(input_points=torch.tensor([[[[60.0, 40.0]]]]), input_labels=torch.tensor([[[1]]]))
    else:
        out.update(input_ids=ids, attention_mask=torch.ones_like(ids))
    if kind == "clipseg":
        del out["attention_mask"]
    return out


def _tensors(output) -> list:
    found = []
    for value in output.values() if hasattr(output, "values") else output:
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, (tuple, list)) or hasattr(value, "values"):
            found.extend(_tensors(value))
    return found


CLASSES = {"owlv2": "Owlv2ForObjectDetection", "clipseg": "CLIPSegForImageSegmentation",
           "sam2": "Sam2Model", "sam3": "Sam3Model", "grounding-dino": "GroundingDinoForObjectDetection"}
FOLDERS = {"owlv2": "tiny_owlv2", "clipseg": "tiny_clipseg", "sam2": "tiny_sam2_hf", "sam3": "tiny_sam3",
           "grounding-dino": "tiny_grounding_dino"}
#: the tiny OWLv2 and CLIPSeg see 64 px (17 tokens, under MIN_QUERIES): rebuilt from the same
#: config at 640 px (1,601 tokens) so their vision attentions and linear layers are split
WIDE = 640


def _model(kind: str, folder, implementation: str):
    cls = getattr(transformers, CLASSES[kind])
    if kind not in ("owlv2", "clipseg"):
        return cls.from_pretrained(folder, attn_implementation=implementation).eval()
    config = transformers.AutoConfig.from_pretrained(folder)
    config.vision_config.image_size = WIDE
    torch.manual_seed(0)
    return cls._from_config(config, attn_implementation=implementation).eval()


@pytest.mark.parametrize("implementation", ["sdpa", "eager"])
@pytest.mark.parametrize("kind", list(CLASSES))
def test_split_attention_and_linear_are_bitwise_equal_to_the_whole(kind, implementation, request, monkeypatch):
    """Every head alone, long linear layers in blocks of 768 rows and deformable attention in blocks
    of 16 queries give the same bits as the unwrapped model (transformers' own pass, no hooks)."""
    if kind == "grounding-dino" and implementation == "sdpa":
        pytest.skip("transformers has no SDPA for Grounding DINO (it raises on loading)")
    model = _model(kind, request.getfixturevalue(FOLDERS[kind]), implementation)
    inputs = _inputs(kind)
    with torch.inference_mode():
        whole = _tensors(model(**inputs))  # no hooks, no wrapper: transformers' own pass
    make_interruptible(model)
    callers: Counter = Counter()  # who called the cancel check: a submodule hook, or a split

    def check() -> None:
        callers[sys._getframe(1).f_globals["__name__"].rsplit(".", 1)[-1]] += 1

    monkeypatch.setattr(attention_split, "GROUP_MACS", 1)  # every head alone
    monkeypatch.setattr(attention_split, "SPLIT_MACS", 0)
    monkeypatch.setattr(linear_split, "SPLIT_MACS", 0)
    monkeypatch.setattr(linear_split, "BLOCK_MACS", 1)  # linear layers in blocks of ROW_ALIGN rows
    monkeypatch.setattr(deformable_split, "QUERY_BLOCK", 16)  # Grounding DINO's encoder: 16 queries a block
    with torch.inference_mode(), cancel_check(check):
        split = _tensors(model(**inputs))
    if kind == "grounding-dino":  # its vision attentions are its own; deformable attention split
        assert callers["deformable_split"] >= 1, f"{kind}: deformable attention not split ({callers})"
    else:
        assert callers["attention_split"] >= 1, f"{kind}: no attention core was split ({callers})"
    if kind in ("owlv2", "clipseg"):  # 1,601 tokens: blocks of 768 + 768 + 65 rows
        assert callers["linear_split"] >= 1, f"{kind}: no linear layer was split ({callers})"
    assert len(split) == len(whole) > 0
    for a, b in zip(whole, split, strict=True):
        assert torch.equal(a, b)


def test_no_check_means_the_models_own_function_untouched():
    attention_split.install()
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
    from transformers.models.owlv2 import modeling_owlv2

    eager = modeling_owlv2.eager_attention_forward
    assert ALL_ATTENTION_FUNCTIONS.get_interface("eager", eager) is eager
    with cancel_check(lambda: None):
        wrapped = ALL_ATTENTION_FUNCTIONS.get_interface("eager", eager)
    assert wrapped is not eager and wrapped.func is attention_split.split_heads and wrapped.args == (eager,)


def test_short_attention_is_not_split():
    query = torch.zeros(1, 4, 10, 8)
    assert attention_split.head_groups(query, query) == 4  # 6,400 multiply-adds, under the budget
    assert attention_split.head_groups(query, query, budget=1) == 1
    assert attention_split.head_groups(query, query, budget=2 * 10 * 10 * 8 * 2) == 2


def _photo(height: int, width: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    image = rng.integers(0, 255, (height, width, 3), dtype=np.uint8)
    image[height // 4: height // 2, width // 4: width // 2] = (230, 20, 20)
    return image


def test_cancel_during_a_slow_attention_core_stops_it_part_way(tiny_owlv2, tiny_sam2_hf, monkeypatch):
    """A tiny OWLv2 whose attention core is made slow (50 ms a call): Cancel pressed once the first
    core has started raises before that core's remaining heads run; nothing is kept, and the next
    run on the same loaded model equals a fresh, uninterrupted one."""
    from transformers.integrations import sdpa_attention
    from transformers.models.owlv2 import modeling_owlv2

    heads: list[int] = []  # heads computed by each slowed core call
    slow = {"on": True}

    def slowed(function):
        def run(module, query, *args, **kwargs):
            if slow["on"]:
                time.sleep(0.05)
                heads.append(query.shape[1])
            return function(module, query, *args, **kwargs)
        return run

    monkeypatch.setitem(transformers.modeling_utils.AttentionInterface._global_mapping, "sdpa",
                        slowed(sdpa_attention.sdpa_attention_forward))
    monkeypatch.setattr(modeling_owlv2, "eager_attention_forward", slowed(modeling_owlv2.eager_attention_forward))
    monkeypatch.setattr(attention_split, "GROUP_MACS", 1)  # tiny sequences: split to one head a group
    monkeypatch.setattr(attention_split, "SPLIT_MACS", 0)
    monkeypatch.setattr(attention_split, "MIN_QUERIES", 1)  # (the next run, with no check, is whole)
    opts = dict(weights=str(tiny_owlv2), sam2_weights=str(tiny_sam2_hf), device="cpu", score_threshold=0.0)
    seg = create_segmenter("owlv2-sam2", **opts)
    seg.ensure_loaded()
    image = _photo(120, 160)

    def check() -> None:  # the user presses Cancel once the first attention core has started
        if heads:
            raise Cancelled()

    with cancel_check(check), pytest.raises(Cancelled):
        seg.segment(image, SegmentRequest("red square"))
    assert heads == [1], f"the first attention ran {heads} heads before Cancel took effect (of 4)"
    assert seg.encodings.stats.entries == 0
    slow["on"] = False
    again = seg.segment(image, SegmentRequest("red square"))
    fresh = create_segmenter("owlv2-sam2", **opts).segment(image, SegmentRequest("red square"))
    assert again.scores == fresh.scores and len(again.masks) == len(fresh.masks) > 0
    for a, b in zip(again.masks, fresh.masks, strict=True):
        assert np.array_equal(a.to_array(), b.to_array())


def test_cancel_between_row_blocks_of_a_long_linear_layer(monkeypatch):
    """A linear layer over 4,000 rows (blocks of 768 under a small budget): Cancel raised at the
    first check between blocks stops it after one block; the plain call (no check) is untouched,
    and the split result is the whole call's, bit for bit."""
    layer = torch.nn.Linear(64, 96)
    x = torch.randn(1, 4000, 64)
    with torch.inference_mode():
        whole = layer(x)
        assert make_interruptible(layer) == 1  # the hook, and the block-wise forward
        assert torch.equal(layer(x), whole)  # no check installed: the plain F.linear
        blocks: list[int] = []
        layer.register_forward_hook(lambda *_: blocks.append(1))
        calls = {"n": 0}

        def check() -> None:  # the first check is the layer's own pre-hook; Cancel at the second
            calls["n"] += 1
            if calls["n"] == 2:
                raise Cancelled()

        monkeypatch.setattr(linear_split, "BLOCK_MACS", 1)
        monkeypatch.setattr(linear_split, "SPLIT_MACS", 0)
        with cancel_check(check), pytest.raises(Cancelled):
            layer(x)
        assert calls["n"] == 2 and blocks == []  # stopped after the first of 6 blocks
        counted: list[int] = []
        with cancel_check(lambda: counted.append(1)):
            split = layer(x)
    assert len(counted) == 1 + 5 and torch.equal(split, whole)
