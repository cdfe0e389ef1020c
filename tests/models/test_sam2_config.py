"""SAM 2 configs are data: shipped configs by name, or YAML whose _target_s are sam2 model classes;
a config that would make hydra write a file is refused before hydra sees it."""

from __future__ import annotations

from pathlib import Path

import pytest

from masklens.core.errors import ModelError
from masklens.core.models.sam2_config import ALLOWED_TARGETS, load_sam2_config, shipped_configs

pytest.importorskip("sam2")


def _evil_yaml(folder: Path, victim: Path, *, interpolated: bool = False) -> Path:
    """A config whose model is real SAM 2 but with a nested pathlib.Path.write_text target."""
    target = "${evil}" if interpolated else "pathlib.Path.write_text"
    text = f"""
evil: pathlib.Path.write_text
model:
  _target_: sam2.modeling.sam2_base.SAM2Base
  image_size: 64
  image_encoder:
    _target_: sam2.modeling.backbones.image_encoder.ImageEncoder
    scalp: 1
    trunk:
      _target_: {target}
      _args_:
        - _target_: pathlib.Path
          _args_: ["{victim}"]
        - "owned"
"""
    p = folder / ("evil_interp.yaml" if interpolated else "evil.yaml")
    p.write_text(text)
    return p


def test_the_payload_is_live_when_instantiated_freely(tmp_path):
    """Proof that the test YAML is an attack: plain hydra instantiate writes the file."""
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    victim = tmp_path / "victim.txt"
    cfg = OmegaConf.load(_evil_yaml(tmp_path, victim))
    instantiate(cfg.model.image_encoder.trunk)
    assert victim.read_text() == "owned"


@pytest.mark.parametrize("interpolated", [False, True])
def test_nested_write_text_target_is_refused_and_writes_nothing(tmp_path, interpolated):
    victim = tmp_path / "victim.txt"
    path = _evil_yaml(tmp_path, victim, interpolated=interpolated)
    with pytest.raises(ModelError) as info:
        load_sam2_config(str(path), backend="grounded-sam2")
    msg = str(info.value)
    assert "refused" in msg and "pathlib." in msg and str(path) in msg
    assert "model.image_encoder.trunk" in msg
    assert not victim.exists()


def test_refused_through_the_backend_before_hydra(tmp_path, tiny_sam2_meta, tiny_grounding_dino, rgb_image):
    from masklens.core.models.base import SegmentRequest
    from masklens.core.models.registry import create_segmenter

    ckpt, _ = tiny_sam2_meta
    victim = tmp_path / "victim.txt"
    seg = create_segmenter("grounded-sam2", weights=str(tiny_grounding_dino), sam2_weights=str(ckpt),
                           sam2_config=str(_evil_yaml(tmp_path, victim)), device="cpu")
    with pytest.raises(ModelError, match="refused"):
        seg.segment(rgb_image, SegmentRequest("cat"))
    assert not victim.exists()


def test_shipped_configs_and_the_tiny_yaml_pass(tiny_sam2_meta):
    names = shipped_configs()
    assert "configs/sam2.1/sam2.1_hiera_l.yaml" in names
    assert not any("training" in n for n in names)
    for name in names:
        cfg = load_sam2_config(name, backend="t")
        assert cfg.model._target_ in ALLOWED_TARGETS
    _, yaml_path = tiny_sam2_meta
    assert load_sam2_config(str(yaml_path), backend="t").model._target_ == "sam2.modeling.sam2_base.SAM2Base"


@pytest.mark.parametrize("text,match", [
    ("model: {_target_: os.system, _args_: [echo hi]}", "refused"),
    ("model: {_target_: [sam2.modeling.sam2_base.SAM2Base]}", "refused"),
    ("model: {image_size: 3}", "no model"),
    ("- a\n- b", "mapping"),
    ("model:\n  _target_: ${oc.env:NO_SUCH_VAR_MASKLENS}", "resolve"),
    ("model: [unclosed", "YAML"),
])
def test_bad_yaml_gets_a_clear_error(tmp_path, text, match):
    p = tmp_path / "c.yaml"
    p.write_text(text)
    with pytest.raises(ModelError, match=match):
        load_sam2_config(str(p), backend="t")


def test_unknown_name_lists_the_shipped_configs():
    with pytest.raises(ModelError, match="shipped configs: configs/sam2"):
        load_sam2_config("../../etc/evil", backend="t")
