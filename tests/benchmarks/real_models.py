"""Real-size checkpoints with random weights, built from the real transformers configs (the sizes
of the published checkpoints), saved the way a user's checkpoint is saved, for `make
bench-models`. Tokenizers are built in memory as the tests build them (tests/models/tiny.py): a
small vocabulary, the model's embedding table at its real size. Weights are random, so these say
nothing about accuracy, only about time and memory.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))

import tiny  # noqa: E402


def _clip_ids(tok) -> dict:
    bos, eos = tok.convert_tokens_to_ids(["<|startoftext|>", "<|endoftext|>"])
    return {"bos_token_id": bos, "eos_token_id": eos, "pad_token_id": eos}


def build_clipseg(folder: Path) -> Path:
    """CIDAS/clipseg-rd64-refined: CLIP ViT-B/16, reduce_dim 64, layers 3/6/9, 352 px input."""
    from transformers import (
        CLIPSegConfig,
        CLIPSegForImageSegmentation,
        CLIPSegProcessor,
        ViTImageProcessor,
    )

    tok = tiny.clip_tokenizer()
    config = CLIPSegConfig(text_config=_clip_ids(tok), vision_config={"patch_size": 16}, reduce_dim=64,
                           use_complex_transposed_convolution=True)
    CLIPSegForImageSegmentation(config).eval().save_pretrained(folder)
    CLIPSegProcessor(image_processor=ViTImageProcessor(size={"height": 352, "width": 352}),
                     tokenizer=tok).save_pretrained(folder)
    return folder


def build_sam3(folder: Path) -> Path:
    """facebook/sam3: the default Sam3Config (840 M parameters), 1008 px input. Its text encoder
    is SAM 3's own (1024 wide, 24 layers, 4096): the config is the default one with only the
    tokenizer's special ids set (a ``text_config`` dict would replace it with CLIP's 512/12/2048)."""
    from transformers import Sam3Config, Sam3ImageProcessor, Sam3Model, Sam3Processor

    tok = tiny.clip_tokenizer()
    config = Sam3Config()
    for key, value in _clip_ids(tok).items():
        setattr(config.text_config, key, value)
    Sam3Model(config).eval().save_pretrained(folder)
    Sam3Processor(image_processor=Sam3ImageProcessor(), tokenizer=tok).save_pretrained(folder)
    return folder


def build_sam2_large(folder: Path) -> Path:
    """facebook/sam2.1-hiera-large: Hiera-L backbone (blocks 2/6/36/4, dims 144…1152), 1024 px."""
    from transformers import (
        Sam2Config,
        Sam2HieraDetConfig,
        Sam2ImageProcessor,
        Sam2Model,
        Sam2Processor,
        Sam2VisionConfig,
    )

    backbone = Sam2HieraDetConfig(
        hidden_size=144, num_attention_heads=2, blocks_per_stage=[2, 6, 36, 4],
        embed_dim_per_stage=[144, 288, 576, 1152], num_attention_heads_per_stage=[2, 4, 8, 16],
        window_size_per_stage=[8, 4, 16, 8], global_attention_blocks=[23, 33, 43],
        window_positional_embedding_background_size=[7, 7],
    )
    config = Sam2Config(vision_config=Sam2VisionConfig(
        backbone_config=backbone, backbone_channel_list=[1152, 576, 288, 144]))
    Sam2Model(config).eval().save_pretrained(folder)
    Sam2Processor(image_processor=Sam2ImageProcessor()).save_pretrained(folder)
    return folder


def build_grounding_dino(folder: Path) -> Path:
    """IDEA-Research/grounding-dino-base: Swin-B (384 px windows 12) + BERT-base text encoder."""
    from transformers import (
        GroundingDinoConfig,
        GroundingDinoForObjectDetection,
        GroundingDinoImageProcessor,
        GroundingDinoProcessor,
        SwinConfig,
    )

    tok = tiny.bert_tokenizer()
    swin = SwinConfig(embed_dim=128, depths=[2, 2, 18, 2], num_heads=[4, 8, 16, 32], window_size=12,
                      image_size=384, out_features=["stage2", "stage3", "stage4"], out_indices=[2, 3, 4])
    config = GroundingDinoConfig(backbone_config=swin, text_config={"model_type": "bert"})
    GroundingDinoForObjectDetection(config).eval().save_pretrained(folder)
    GroundingDinoProcessor(image_processor=GroundingDinoImageProcessor(), tokenizer=tok).save_pretrained(folder)
    return folder


def build_owlv2(folder: Path) -> Path:
    """google/owlv2-large-patch14-ensemble: ViT-L/14 at 960 px, CLIP text encoder, 16 positions."""
    from transformers import (
        Owlv2Config,
        Owlv2ForObjectDetection,
        Owlv2ImageProcessor,
        Owlv2Processor,
    )

    tok = tiny.clip_tokenizer()
    config = Owlv2Config(
        text_config={**_clip_ids(tok), "hidden_size": 768, "intermediate_size": 3072,
                     "num_attention_heads": 12, "max_position_embeddings": 16},
        vision_config={"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24,
                       "num_attention_heads": 16, "image_size": 960, "patch_size": 14},
        projection_dim=768,
    )
    Owlv2ForObjectDetection(config).eval().save_pretrained(folder)
    Owlv2Processor(image_processor=Owlv2ImageProcessor(size={"height": 960, "width": 960}),
                   tokenizer=tok).save_pretrained(folder)
    return folder


def parameter_count(*folders: Path) -> int:
    """Parameters in the safetensors files of ``folders`` (from their headers: nothing loaded)."""
    import json
    import math
    import struct

    total = 0
    for folder in folders:
        for f in sorted(folder.glob("*.safetensors")):
            with f.open("rb") as fh:
                (size,) = struct.unpack("<Q", fh.read(8))
                header = json.loads(fh.read(size))
            total += sum(math.prod(t["shape"]) for k, t in header.items() if k != "__metadata__")
    return total


def size_label(*folders: Path) -> str:
    """``840.4 M parameters``: what every bench line of a model says of its size."""
    return f"{parameter_count(*folders) / 1e6:.1f} M parameters"


#: checkpoint name -> builder
BUILDERS: dict[str, Callable[[Path], Path]] = {
    "clipseg": build_clipseg, "sam3": build_sam3, "sam2.1-hiera-large": build_sam2_large,
    "grounding-dino-base": build_grounding_dino, "owlv2-large": build_owlv2,
}
#: backend -> (main checkpoint, SAM 2 checkpoint or None)
BACKEND_CHECKPOINTS: dict[str, tuple[str, str | None]] = {
    "clipseg": ("clipseg", None), "sam3": ("sam3", None),
    "grounded-sam2": ("grounding-dino-base", "sam2.1-hiera-large"),
    "owlv2-sam2": ("owlv2-large", "sam2.1-hiera-large"),
}


#: the tiny test checkpoints of the same families (``--tiny``: checks the bench script itself)
TINY: dict[str, Callable[[Path], Path]] = {
    "clipseg": tiny.build_clipseg, "sam3": tiny.build_sam3, "sam2.1-hiera-large": tiny.build_sam2_hf,
    "grounding-dino-base": tiny.build_grounding_dino, "owlv2-large": tiny.build_owlv2,
}


def checkpoint(name: str, root: Path, *, tiny_size: bool = False) -> Path:
    """The real-size random checkpoint ``name`` under ``root``, built once (a folder is complete
    once its ``.complete`` marker exists; an interrupted build is rebuilt). ``tiny_size``: the
    tiny test checkpoint instead."""
    folder = root / (f"tiny-{name}" if tiny_size else name)
    if (folder / ".complete").is_file():
        return folder  # torch not imported: the window's lines then see its first import
    import shutil

    import torch

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    torch.manual_seed(0)
    (TINY if tiny_size else BUILDERS)[name](folder)
    (folder / ".complete").write_text("built by tests/benchmarks/real_models.py\n")
    return folder
