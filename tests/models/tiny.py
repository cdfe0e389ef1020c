"""Tiny, randomly initialised checkpoints built from the real transformers config classes (and a
tiny Meta ``sam2`` model through hydra overrides), saved the way a user's checkpoint is saved, so
the backends load them through their ordinary code path. No downloads: tokenizers are built in
memory, weights are random.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

_T = TypeVar("_T")


def _seeded(build: Callable[..., _T]) -> Callable[..., _T]:
    """Random weights, but the same ones every session: a tiny model whose mask logits sit near
    the threshold by bad luck must not make a test flaky."""

    @functools.wraps(build)
    def wrapper(*args, **kwargs):
        import torch

        torch.manual_seed(1234)
        return build(*args, **kwargs)

    return wrapper

WORDS = [
    "a", "the", "red", "blue", "green", "circle", "square", "triangle", "cat", "dog", "shape",
    "object", "whole", "hidden", "part", "photo", "of",
]


def forward_calls(module) -> list[int]:
    """A list that gets one entry per forward call of ``module`` (proves encodings are reused)."""
    calls: list[int] = []
    module.register_forward_hook(lambda *_: calls.append(1))
    return calls


def clip_tokenizer():
    """A CLIP BPE tokenizer over a small character vocabulary (merges for the test words).

    As in the real CLIP vocabulary, id 0 is an ordinary token and the special tokens come last:
    OWLv2 treats a query whose first id is 0 as padding.
    """
    from transformers import CLIPTokenizer

    vocab: dict[str, int] = {}
    for ch in sorted(set("".join(WORDS)) | set(".,?!-'")):
        vocab.setdefault(ch, len(vocab))
        vocab.setdefault(ch + "</w>", len(vocab))
    merges: list[tuple[str, str]] = []
    for word in WORDS:  # left-to-right merges so every test word becomes one token
        pieces = list(word[:-1]) + [word[-1] + "</w>"]
        while len(pieces) > 1:
            merged = pieces[0] + pieces[1]
            rule = (pieces[0], pieces[1])
            if rule not in merges:
                merges.append(rule)
            vocab.setdefault(merged, len(vocab))
            pieces = [merged, *pieces[2:]]
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    return CLIPTokenizer(vocab=vocab, merges=merges)


def _clip_text(tok, hidden: int = 32, **extra) -> dict:
    bos, eos = tok.convert_tokens_to_ids(["<|startoftext|>", "<|endoftext|>"])
    return {
        "vocab_size": len(tok),
        "hidden_size": hidden,
        "intermediate_size": 2 * hidden,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "max_position_embeddings": 32,
        "bos_token_id": bos,
        "eos_token_id": eos,
        "pad_token_id": eos,
        **extra,
    }


@_seeded
def build_sam3(folder: Path) -> Path:
    from transformers import Sam3Config, Sam3ImageProcessor, Sam3Model, Sam3Processor
    from transformers.models.sam3.configuration_sam3 import (
        Sam3DETRDecoderConfig,
        Sam3DETREncoderConfig,
        Sam3GeometryEncoderConfig,
        Sam3MaskDecoderConfig,
        Sam3VisionConfig,
        Sam3ViTConfig,
    )

    tok = clip_tokenizer()
    backbone = Sam3ViTConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        image_size=112, patch_size=14, window_size=4, global_attn_indexes=[1],
    )
    config = Sam3Config(
        vision_config=Sam3VisionConfig(backbone_config=backbone, fpn_hidden_size=32, scale_factors=[2.0, 1.0]),
        text_config=_clip_text(tok, projection_dim=32),
        geometry_encoder_config=Sam3GeometryEncoderConfig(
            hidden_size=32, num_layers=1, num_attention_heads=4, intermediate_size=64
        ),
        detr_encoder_config=Sam3DETREncoderConfig(
            hidden_size=32, num_layers=1, num_attention_heads=4, intermediate_size=64
        ),
        detr_decoder_config=Sam3DETRDecoderConfig(
            hidden_size=32, num_layers=1, num_queries=6, num_attention_heads=4, intermediate_size=64
        ),
        mask_decoder_config=Sam3MaskDecoderConfig(hidden_size=32, num_upsampling_stages=2),
    )
    model = Sam3Model(config).eval()
    processor = Sam3Processor(
        image_processor=Sam3ImageProcessor(size={"height": 112, "width": 112}), tokenizer=tok
    )
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


@_seeded
def build_sam2_hf(folder: Path) -> Path:
    from transformers import (
        Sam2Config,
        Sam2HieraDetConfig,
        Sam2ImageProcessor,
        Sam2MaskDecoderConfig,
        Sam2Model,
        Sam2Processor,
        Sam2PromptEncoderConfig,
        Sam2VisionConfig,
    )

    backbone = Sam2HieraDetConfig(
        hidden_size=12, image_size=128, patch_stride=4, patch_kernel_size=7, patch_padding=3,
        blocks_per_stage=[1, 1, 1, 1], embed_dim_per_stage=[12, 24, 48, 96],
        num_attention_heads_per_stage=[1, 1, 1, 1],
    )
    config = Sam2Config(
        vision_config=Sam2VisionConfig(
            backbone_config=backbone, backbone_channel_list=[96, 48, 24, 12],
            backbone_feature_sizes=[[32, 32], [16, 16], [8, 8]], fpn_hidden_size=32,
        ),
        prompt_encoder_config=Sam2PromptEncoderConfig(
            image_size=128, patch_size=16, mask_input_channels=8, hidden_size=32
        ),
        mask_decoder_config=Sam2MaskDecoderConfig(
            hidden_size=32, mlp_dim=64, num_hidden_layers=2, num_attention_heads=4, iou_head_hidden_dim=32
        ),
    )
    Sam2Model(config).eval().save_pretrained(folder)
    Sam2Processor(
        image_processor=Sam2ImageProcessor(size={"height": 128, "width": 128}, mask_size={"height": 32, "width": 32})
    ).save_pretrained(folder)
    return folder


def bert_tokenizer():
    """A BERT WordPiece tokenizer whose ids 101/102/1012/1029 are [CLS]/[SEP]/'.'/'?' as in
    bert-base-uncased (Grounding DINO's phrase splitting relies on them)."""
    from transformers import BertTokenizer

    tokens = ["[PAD]"] + [f"[unused{i}]" for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    while len(tokens) < 1012:
        tokens.append(f"[unused{len(tokens)}]")
    tokens.append(".")
    while len(tokens) < 1029:
        tokens.append(f"[unused{len(tokens)}]")
    tokens.append("?")
    tokens += WORDS
    return BertTokenizer(vocab={t: i for i, t in enumerate(tokens)})


@_seeded
def build_grounding_dino(folder: Path) -> Path:
    from transformers import (
        GroundingDinoConfig,
        GroundingDinoForObjectDetection,
        GroundingDinoImageProcessor,
        GroundingDinoProcessor,
        SwinConfig,
    )

    tok = bert_tokenizer()
    swin = SwinConfig(
        window_size=7, embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1], image_size=98,
        out_features=["stage2", "stage3", "stage4"], out_indices=[2, 3, 4],
    )
    config = GroundingDinoConfig(
        d_model=32, encoder_layers=1, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=16, decoder_ffn_dim=16, num_queries=8,
        num_feature_levels=4, encoder_n_points=2, decoder_n_points=2, backbone_config=swin,
        max_text_len=16,
        text_config={
            "model_type": "bert", "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
            "intermediate_size": 8, "max_position_embeddings": 32, "vocab_size": len(tok),
        },
    )
    GroundingDinoForObjectDetection(config).eval().save_pretrained(folder)
    GroundingDinoProcessor(
        image_processor=GroundingDinoImageProcessor(size={"shortest_edge": 98, "longest_edge": 160}),
        tokenizer=tok,
    ).save_pretrained(folder)
    return folder


@_seeded
def build_owlv2(folder: Path) -> Path:
    import torch
    from transformers import (
        Owlv2Config,
        Owlv2ForObjectDetection,
        Owlv2ImageProcessor,
        Owlv2Processor,
    )

    tok = clip_tokenizer()
    config = Owlv2Config(
        text_config=_clip_text(tok, max_position_embeddings=16),
        vision_config={
            "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
            "num_attention_heads": 4, "image_size": 64, "patch_size": 16,
        },
        projection_dim=32,  # must equal the text hidden size
    )
    model = Owlv2ForObjectDetection(config).eval()
    # A random box head puts most boxes outside the image. Make it behave like a trained one: each
    # patch predicts a box centred on itself (OWL's box bias), enlarged so neighbours overlap and
    # box NMS has something to do.
    with torch.no_grad():
        model.box_head.dense2.weight.zero_()
        model.box_head.dense2.bias.copy_(torch.tensor([0.0, 0.0, 1.5, 1.5]))
    model.save_pretrained(folder)
    Owlv2Processor(
        image_processor=Owlv2ImageProcessor(size={"height": 64, "width": 64}), tokenizer=tok
    ).save_pretrained(folder)
    return folder


@_seeded
def build_clipseg(folder: Path, *, image_size: int = 64, patch_size: int = 16, layers: int = 2) -> Path:
    """A tiny random CLIPSeg. A large ``image_size`` with a small ``patch_size`` and many
    ``layers`` makes a forward pass slow (448 / 8 / 48: ~4 s on a 2-core CPU) with a checkpoint
    still under 2 MB: what a test of Cancel mid-forward needs."""
    from transformers import (
        CLIPSegConfig,
        CLIPSegForImageSegmentation,
        CLIPSegProcessor,
        ViTImageProcessor,
    )

    tok = clip_tokenizer()
    config = CLIPSegConfig(
        text_config=_clip_text(tok),
        vision_config={
            "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": layers,
            "num_attention_heads": 4, "image_size": image_size, "patch_size": patch_size,
        },
        projection_dim=32,
        extract_layers=[0, 1],
        reduce_dim=16,
        decoder_num_attention_heads=2,
        decoder_intermediate_size=32,
    )
    CLIPSegForImageSegmentation(config).eval().save_pretrained(folder)
    CLIPSegProcessor(
        image_processor=ViTImageProcessor(size={"height": image_size, "width": image_size}), tokenizer=tok
    ).save_pretrained(folder)
    return folder


#: hydra overrides that shrink Meta's sam2.1 Hiera-T config to a few thousand parameters
SAM2_META_TINY_OVERRIDES = [
    "++model.image_size=128",
    "model.image_encoder.trunk.embed_dim=8",
    "model.image_encoder.trunk.stages=[1,1,2,1]",
    "model.image_encoder.trunk.global_att_blocks=[3]",
    "model.image_encoder.trunk.window_pos_embed_bkg_spatial_size=[4,4]",
    "++model.image_encoder.trunk.window_spec=[4,4,4,2]",
    "model.image_encoder.neck.d_model=32",
    "model.image_encoder.neck.backbone_channel_list=[64,32,16,8]",
    "model.image_encoder.neck.position_encoding.num_pos_feats=32",
    "model.memory_attention.d_model=32",
    "model.memory_attention.num_layers=1",
    "model.memory_attention.layer.d_model=32",
    "model.memory_attention.layer.dim_feedforward=32",
    "model.memory_attention.layer.self_attention.embedding_dim=32",
    "model.memory_attention.layer.self_attention.feat_sizes=[8,8]",
    "model.memory_attention.layer.cross_attention.embedding_dim=32",
    "model.memory_attention.layer.cross_attention.feat_sizes=[8,8]",
    "model.memory_attention.layer.cross_attention.kv_in_dim=16",
    "model.memory_encoder.out_dim=16",
    "model.memory_encoder.position_encoding.num_pos_feats=16",
    "++model.memory_encoder.mask_downsampler.embed_dim=32",
    "++model.memory_encoder.in_dim=32",
    "model.memory_encoder.fuser.layer.dim=32",
    "model.memory_encoder.fuser.num_layers=1",
]


@_seeded
def build_sam2_meta(folder: Path) -> tuple[Path, Path]:
    """A tiny SAM 2 from Meta's package: ``build_sam2`` with hydra overrides; returns the ``.pt``
    checkpoint ({"model": state_dict}, as Meta ships them) and the resolved config YAML."""
    import sam2  # noqa: F401 - initialises hydra's config module
    import torch
    from hydra import compose
    from omegaconf import OmegaConf
    from sam2.build_sam import build_sam2

    name = "configs/sam2.1/sam2.1_hiera_t.yaml"
    model = build_sam2(name, ckpt_path=None, device="cpu", hydra_overrides_extra=SAM2_META_TINY_OVERRIDES)
    cfg = compose(config_name=name, overrides=SAM2_META_TINY_OVERRIDES)
    config_path = folder / "sam2_tiny.yaml"
    config_path.write_text(OmegaConf.to_yaml(cfg))
    ckpt = folder / "sam2_tiny.pt"
    torch.save({"model": model.state_dict()}, ckpt)
    return ckpt, config_path
