"""SAM 2 configs as data: a config shipped with the ``sam2`` package (by name) or a YAML file
whose every ``_target_`` (at any depth, after interpolation) is one of the sam2 model classes.

Hydra's ``instantiate`` imports and calls whatever a ``_target_`` names, so a config is code.
This module reads the YAML as data (OmegaConf's safe YAML loader), resolves interpolations,
and refuses any config naming a target outside :data:`ALLOWED_TARGETS` before hydra sees it.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from masklens.core.errors import ModelError

#: the classes SAM 2's image-model configs instantiate (sam2 1.0/1.1 configs/sam2*, configs/sam2.1*)
ALLOWED_TARGETS = frozenset({
    "sam2.modeling.sam2_base.SAM2Base",
    "sam2.modeling.backbones.hieradet.Hiera",
    "sam2.modeling.backbones.image_encoder.FpnNeck",
    "sam2.modeling.backbones.image_encoder.ImageEncoder",
    "sam2.modeling.memory_attention.MemoryAttention",
    "sam2.modeling.memory_attention.MemoryAttentionLayer",
    "sam2.modeling.memory_encoder.CXBlock",
    "sam2.modeling.memory_encoder.Fuser",
    "sam2.modeling.memory_encoder.MaskDownSampler",
    "sam2.modeling.memory_encoder.MemoryEncoder",
    "sam2.modeling.position_encoding.PositionEmbeddingSine",
    "sam2.modeling.sam.transformer.Attention",
    "sam2.modeling.sam.transformer.RoPEAttention",
})
#: the package's folders of model configs (its training configs are not models)
_MODEL_CONFIG_DIRS = ("configs/sam2", "configs/sam2.1")


def shipped_configs() -> list[str]:
    """Names (``configs/sam2.1/sam2.1_hiera_l.yaml`` …) of the model configs in the sam2 package."""
    try:
        root = resources.files("sam2")
    except ModuleNotFoundError:
        return []
    names = []
    for folder in _MODEL_CONFIG_DIRS:
        d = root.joinpath(folder)
        if d.is_dir():
            names += sorted(f"{folder}/{f.name}" for f in d.iterdir() if f.name.endswith(".yaml"))
    return names


def _targets(node: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """Every (dotted location, value) of a ``_target_`` key in plain nested dicts/lists."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{where}.{key}" if where else str(key)
            if key == "_target_":
                yield here, value
            else:
                yield from _targets(value, here)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _targets(value, f"{where}[{i}]")


def check_targets(cfg: Any, *, source: str, backend: str) -> None:
    """Refuse (ModelError naming the key) a config with a ``_target_`` outside the allow-list."""
    from omegaconf import OmegaConf

    data = OmegaConf.to_container(cfg, resolve=True) if OmegaConf.is_config(cfg) else cfg
    found = False
    for where, target in _targets(data):
        found = True
        if not isinstance(target, str) or target not in ALLOWED_TARGETS:
            raise ModelError(
                f"{backend}: SAM 2 config refused: '{where}' names {target!r}, which is not a "
                "SAM 2 model class",
                path=source, field=where,
                hint="use a config shipped with sam2 (e.g. configs/sam2.1/sam2.1_hiera_l.yaml) or a "
                "YAML whose _target_ entries are all sam2.modeling classes",
            )
    if not found:
        raise ModelError(f"{backend}: SAM 2 config has no model (_target_) entries", path=source,
                         hint="pass a SAM 2 model config")


def load_sam2_config(config: str, *, backend: str) -> Any:
    """The config named ``config`` (shipped with sam2) or read from the YAML file ``config``,
    interpolations resolved and every ``_target_`` checked; raises ModelError otherwise."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    path = Path(config).expanduser()
    shipped = shipped_configs()
    if config in shipped:
        cfg = _compose_shipped(config, backend)
        source = f"sam2 package: {config}"
    elif path.suffix in (".yaml", ".yml") and path.is_file():
        source = str(path)
        try:
            cfg = OmegaConf.load(path)
        except (OmegaConfBaseException, ValueError, OSError, UnicodeDecodeError) as exc:
            raise ModelError(f"{backend}: cannot read the SAM 2 config ({type(exc).__name__}: {exc})",
                             path=path) from None
        except Exception as exc:  # noqa: BLE001 - yaml's scanner/parser errors have no common base here
            raise ModelError(f"{backend}: the SAM 2 config is not valid YAML ({exc})", path=path) from None
        if not OmegaConf.is_dict(cfg):
            raise ModelError(f"{backend}: the SAM 2 config must be a mapping", path=path)
    else:
        raise ModelError(
            f"{backend}: SAM 2 config '{config}' not found (neither a config shipped with sam2 nor "
            "a YAML file)",
            hint=f"shipped configs: {', '.join(shipped) or 'none (is sam2 installed?)'}",
        )
    try:
        OmegaConf.resolve(cfg)
    except OmegaConfBaseException as exc:
        raise ModelError(f"{backend}: cannot resolve the SAM 2 config ({exc})", path=source) from None
    check_targets(cfg, source=source, backend=backend)
    if "model" not in cfg:
        raise ModelError(f"{backend}: the SAM 2 config has no 'model' section", path=source,
                         field="model")
    return cfg


def _compose_shipped(name: str, backend: str) -> Any:
    try:
        import sam2  # noqa: F401 - initialises hydra's config module
        from hydra import compose

        return compose(config_name=name)
    except Exception as exc:  # noqa: BLE001 - hydra raises several unrelated types
        raise ModelError(
            f"{backend}: SAM 2 config '{name}' cannot be loaded ({type(exc).__name__}: {exc})",
        ) from exc
