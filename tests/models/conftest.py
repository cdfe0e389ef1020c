"""Session-scoped tiny checkpoints (built once, saved like a user's checkpoint) and test images."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))


def _built(factory, name: str):
    @pytest.fixture(scope="session")
    def fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
        import tiny

        return getattr(tiny, factory)(tmp_path_factory.mktemp(name))

    return fixture


tiny_sam3 = _built("build_sam3", "sam3")
tiny_sam2_hf = _built("build_sam2_hf", "sam2hf")
tiny_grounding_dino = _built("build_grounding_dino", "gdino")
tiny_owlv2 = _built("build_owlv2", "owlv2")
tiny_clipseg = _built("build_clipseg", "clipseg")


@pytest.fixture(scope="session")
def tiny_sam2_meta(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    import tiny

    return tiny.build_sam2_meta(tmp_path_factory.mktemp("sam2meta"))


@pytest.fixture()
def rgb_image() -> np.ndarray:
    """A 48×64 RGB image with a red square on grey (not square, so resizing bugs show)."""
    image = np.full((48, 64, 3), 128, np.uint8)
    image[10:30, 20:44] = (220, 30, 30)
    return image


#: demo images the differential tests run on (with the generated photographs of photos.py)
DEMO_IMAGES = ("cafe/images/0001.png", "r2sm/images/0002.png")


@pytest.fixture(scope="session")
def photo_cases(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """photos.write_cases: an EXIF-6 JPEG, odd sizes, grey 8/16-bit, 16-bit colour, palette, RGBA."""
    from photos import write_cases

    return write_cases(tmp_path_factory.mktemp("photos"))


@pytest.fixture(scope="session")
def reference_images(photo_cases) -> list[Path]:
    """Images for the differential tests against the reference pipelines: two demo images and the
    generated photographs on which transformers' ``load_image`` and masklens' decoder agree (all but
    16-bit grey, see docs/images.md)."""
    demo = Path(__file__).resolve().parents[2] / "resources" / "demo"
    picked = ("exif6.jpg", "plain.jpg", "grey.png", "palette.png", "rgba.png", "rgb16.png")
    return [demo / p for p in DEMO_IMAGES] + [photo_cases[name].path for name in picked]
