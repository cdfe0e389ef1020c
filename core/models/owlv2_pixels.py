"""OWLv2's image pre-processing, interruptible: the same pixel values as transformers'
``Owlv2ImageProcessor`` (torchvision backend), with the one long step cut in pieces.

The processor rescales, pads the image to a square, blurs it with a Gaussian (anti-aliasing before
the downscale), resizes it bilinearly and normalises it. At 1800×1200 → 960 px the blur is one
``conv2d`` over 1800×1800×3 floats (~0.5 s on a free 2-core CPU, seconds on a loaded one; at
a tiny test size of 64 px its 83×83 kernel takes ~5 s) and is no torch module, so no cancel hook
could stop it. Here the blur runs in strips of output rows over the once-padded image, with the
thread's cancel check (:func:`masklens.core.models.interrupt.current_check`) between strips; every
other step is the processor's own method. Only a processor this reproduces is handled (exactly
that class, pad/resize/rescale/normalise on); any other gives None and the caller runs the
processor itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

#: output rows per blur strip (a strip of 1800-px rows with a 5×5 kernel: a few ms)
STRIP_ROWS = 64


def _kernel1d(size: int, sigma: float, torch: Any) -> Any:
    """torchvision's Gaussian kernel (``_get_gaussian_kernel1d``), float32."""
    lim = (size - 1) / (2.0 * math.sqrt(2.0))
    x = torch.linspace(-lim, lim, steps=size, dtype=torch.float32)
    return torch.softmax(x.div(sigma).pow(2).neg(), dim=0)


def blur_in_strips(image: Any, kernel_size: tuple[int, int], sigma: tuple[float, float],
                   check: Callable[[], None] | None, rows: int = STRIP_ROWS) -> Any:
    """``torchvision.transforms.v2.functional.gaussian_blur(image, kernel_size, sigma)`` of a
    float (1, C, H, W) tensor (``kernel_size``/``sigma`` as torchvision reads them: x first),
    computed ``rows`` output rows at a time with ``check()`` before each strip."""
    import torch

    kx, ky = int(kernel_size[0]), int(kernel_size[1])
    kernel = _kernel1d(ky, sigma[1], torch).unsqueeze(-1) * _kernel1d(kx, sigma[0], torch)
    channels = image.shape[-3]
    kernel = kernel.to(image.dtype).expand(channels, 1, ky, kx)
    padded = torch.nn.functional.pad(image, [kx // 2, kx // 2, ky // 2, ky // 2], mode="reflect")
    height = image.shape[-2]
    strips = []
    for top in range(0, height, rows):
        if check is not None:
            check()
        bottom = min(height, top + rows)
        strips.append(torch.nn.functional.conv2d(padded[..., top:bottom + 2 * (ky // 2), :], kernel,
                                                 groups=channels))
    return torch.cat(strips, dim=-2)


def pixel_values(image_processor: Any, image: np.ndarray,
                 check: Callable[[], None] | None) -> Any | None:
    """``image_processor(images=image, return_tensors="pt")["pixel_values"]`` for one H×W×3 uint8
    RGB image, the blur cut in strips with ``check()`` between them; None when
    ``image_processor`` is not the processor this reproduces."""
    try:
        from transformers import Owlv2ImageProcessor
        from transformers.image_processing_backends import TorchvisionBackend
    except ImportError:
        return None
    ip = image_processor
    size = getattr(ip, "size", None)
    if (type(ip) is not Owlv2ImageProcessor or not (ip.do_pad and ip.do_resize and ip.do_rescale
                                                    and ip.do_normalize)
            or size is None or not (getattr(size, "height", None) and getattr(size, "width", None))
            or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8):
        return None
    import torch

    x = torch.from_numpy(np.ascontiguousarray(image)).permute(2, 0, 1).unsqueeze(0)
    x = ip.rescale_and_normalize(x, True, ip.rescale_factor, False, ip.image_mean, ip.image_std)
    x = ip._pad_images(x, constant_value=0.0)
    # Owlv2ImageProcessor.resize: anti-aliasing sigma from the scale factors, then bilinear
    factors = torch.tensor(x.shape[2:]) / torch.tensor((size.height, size.width))
    sigma = ((factors - 1) / 2).clamp(min=0)
    if not torch.any(sigma == 0):
        ks = 2 * torch.ceil(3 * sigma).int() + 1
        x = blur_in_strips(x, (int(ks[0]), int(ks[1])), (float(sigma[0]), float(sigma[1])), check)
    if check is not None:
        check()
    x = TorchvisionBackend.resize(ip, x, size=size, antialias=False)
    return ip.rescale_and_normalize(x, False, ip.rescale_factor, True, ip.image_mean, ip.image_std)
