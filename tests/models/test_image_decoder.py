"""One image decoder: the runner, the torch backends, the GUI's image store and the report gallery
decode every image form (EXIF-rotated JPEG, grey 8/16-bit, 16-bit colour, palette, RGBA) to the same
pixels, which are the pixels the policy in docs/images.md prescribes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from masklens.core.cache.model_cache import image_key
from masklens.core.cache.predictions import PredictionCache
from masklens.core.errors import DataFormatError, ModelError
from masklens.core.files.images import read_image
from masklens.core.inference.runner import RunStats, load_image, run_benchmark
from masklens.core.models.base import BackendInfo, Segmenter, SegmentRequest, SegmentResult
from masklens.core.models.torch_runtime import as_rgb_image
from masklens.core.reports.gallery import _load_image as gallery_image
from masklens.core.schema import Benchmark, ImageRef, Prompt, Role, Sample
from masklens.gui.canvas.image_cache import ImageStore


@pytest.fixture(scope="module")
def cases(photo_cases):
    return photo_cases


class Recorder(Segmenter):
    """Keeps the pixels the runner hands to the model."""

    info = BackendInfo("recorder", "records images", None, 0.5, needs_weights=False)

    def __init__(self) -> None:
        self.seen: dict[str, np.ndarray] = {}

    def segment(self, image: np.ndarray, request: SegmentRequest) -> SegmentResult:
        self.seen[request.text] = image.copy()
        return SegmentResult([], [], presence=0.0)


def _benchmark(refs: dict[str, ImageRef]) -> Benchmark:
    samples = [
        Sample(name, {"img": ref}, {}, [Prompt(f"p-{name}", name, Role.POSITIVE, "img", None)])
        for name, ref in refs.items()
    ]
    return Benchmark("toy", "decoder", samples)


def _paths(ref: ImageRef) -> dict[str, np.ndarray]:
    """The pixels each consumer gets for ``ref``."""
    store = ImageStore()
    return {
        "load_image": load_image(ref.path, (ref.height, ref.width)),
        "gui image": store.image(ref),
        "gui rgb_for_model": ImageStore().rgb_for_model(ref),
        "gallery": gallery_image(ref, None, ref.height, ref.width),
    }


def test_each_form_decodes_to_the_policy_pixels(cases):
    for name, case in cases.items():
        got = read_image(case.path)
        assert got.dtype == np.uint8 and got.flags.c_contiguous, name
        np.testing.assert_array_equal(got, case.expected, err_msg=name)
    # the EXIF-rotated JPEG is shown upright: its stored grid is 37×61, the image 61×37
    assert cases["exif6.jpg"].expected.shape == (61, 37, 3)


def test_same_pixels_as_transformers_load_image(cases):
    """transformers' ``load_image`` (EXIF transpose, then ``convert("RGB")``) is the reference the
    HF processors document; the decoder agrees with it on every form but 16-bit grey, which Pillow's
    ``convert`` clips to white (the decoder keeps the high byte, as for 16-bit colour)."""
    from transformers.image_utils import load_image as hf_load_image

    for name, case in cases.items():
        reference = np.asarray(hf_load_image(str(case.path)))
        if name == "grey16.png":
            assert not np.array_equal(reference, case.expected)
            continue
        np.testing.assert_array_equal(read_image(case.path), reference, err_msg=name)


def test_transformers_paints_a_transparent_palette_colour_white(cases):
    """The one way transformers' own pipeline departs from "alpha dropped": after ``load_image``,
    Pillow keeps a palette image's ``info["transparency"]`` and the processors' ``convert_to_rgb``
    composites that colour onto white. masklens drops alpha for every form (docs/images.md); the
    differential tests remove this quirk from the reference (tests/models/reference.py)."""
    from transformers.image_transforms import convert_to_rgb
    from transformers.image_utils import load_image as hf_load_image

    case = cases["palette.png"]
    loaded = hf_load_image(str(case.path))
    assert loaded.info.get("transparency") is not None
    painted = np.asarray(convert_to_rgb(loaded, return_numpy=True))
    transparent = (case.expected == np.asarray(loaded.info["transparency"], np.uint8)).all(axis=2)
    assert transparent.any() and (painted[transparent] == 255).all()
    np.testing.assert_array_equal(painted[~transparent], case.expected[~transparent])


def test_every_path_gives_the_same_pixels(cases, tmp_path):
    refs = {name: ImageRef("img", case.path, *case.expected.shape[:2]) for name, case in cases.items()}
    recorder = Recorder()
    stats = RunStats()
    run_benchmark(recorder, _benchmark(refs), cache=PredictionCache(tmp_path / "cache"), stats=stats)
    assert stats.images_read == len(cases)
    for name, case in cases.items():
        np.testing.assert_array_equal(recorder.seen[name], case.expected, err_msg=f"runner {name}")
        np.testing.assert_array_equal(as_rgb_image(case.path), case.expected, err_msg=f"backend {name}")
        for where, pixels in _paths(refs[name]).items():
            np.testing.assert_array_equal(pixels, case.expected, err_msg=f"{where} {name}")


def test_stored_grid_wins_when_the_benchmark_records_it(cases):
    """A benchmark whose recorded size is the file's stored (unrotated) grid was annotated on the
    stored pixels (Meta's SAM 3 loader ignores EXIF): every path then gives the stored pixels."""
    case = cases["exif6.jpg"]
    stored = np.rot90(case.expected, k=1)
    ref = ImageRef("img", case.path, *case.stored_size)
    assert stored.shape[:2] == case.stored_size
    recorder = Recorder()
    run_benchmark(recorder, _benchmark({"exif": ref}))
    np.testing.assert_array_equal(recorder.seen["exif"], stored)
    for where, pixels in _paths(ref).items():
        np.testing.assert_array_equal(pixels, stored, err_msg=where)
    # any other recorded size leaves the EXIF orientation applied
    np.testing.assert_array_equal(read_image(case.path, (10, 10)), case.expected)


def test_a_key_remembered_under_the_old_decoder_is_not_reused(cases, tmp_path):
    """The runner remembers file -> image key; a key from before this decoder (other pixels for an
    EXIF-rotated file) must not answer from predictions made on the old pixels."""
    case = cases["exif6.jpg"]
    cache = PredictionCache(tmp_path / "cache")
    old_pixels = np.rot90(case.expected, k=1).copy()
    cache.remember_file_image_key(case.path.resolve(), image_key(old_pixels))  # untagged: old runner
    stats = RunStats()
    ref = ImageRef("img", case.path, *case.expected.shape[:2])
    run_benchmark(Recorder(), _benchmark({"a": ref}), cache=cache, stats=stats)
    assert stats.images_read == 1
    stats = RunStats()
    run_benchmark(Recorder(), _benchmark({"a": ref}), cache=cache, stats=stats)
    assert (stats.images_read, stats.cached) == (0, 1)  # the re-tagged key is reused


def test_undecodable_and_missing_files(tmp_path):
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"\xff\xd8\xff not a jpeg")
    for path in (bad, tmp_path / "missing.png"):
        with pytest.raises(DataFormatError) as err:
            read_image(path)
        assert str(path) in str(err.value)
        with pytest.raises(ModelError):
            as_rgb_image(path)
        ref = ImageRef("img", path, 6, 8)
        assert (gallery_image(ref, None, 6, 8) == 235).all()  # blank canvas
        store = ImageStore()
        assert store.image(ref).shape == (6, 8, 3) and str(path) in store.missing
    with pytest.raises(DataFormatError, match="floating-point"):
        from PIL import Image

        Image.fromarray(np.zeros((3, 4), np.float32)).save(tmp_path / "f.tiff")
        read_image(Path(tmp_path / "f.tiff"))
