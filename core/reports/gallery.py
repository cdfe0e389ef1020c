"""Gallery of the worst failures of each kind, drawn as overlays (TP / FP / FN colours).

Only the samples shown are decoded (each panel: its ground truth and the union of the kept
instances, one decode each); the image comes from ``ImageRef.path`` (or ``images_dir``),
else the masks are drawn on a blank canvas.
"""

from __future__ import annotations

import base64
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from masklens.core.files.limits import check_image_header, exists
from masklens.core.masks import union_all
from masklens.core.reports.layout import Failure, KindLayout
from masklens.core.reports.runs import ModelRun, ReportContext
from masklens.core.schema import ImageRef, Sample

#: Okabe–Ito: both (TP) bluish green, prediction only (FP) vermillion, ground truth only (FN) blue
TP, FP, FN = (0, 158, 115), (213, 94, 0), (0, 114, 178)
THUMB = 220


def collect_failures(
    ctx: ReportContext, layout: KindLayout, run: ModelRun
) -> dict[str, list[tuple[int, Failure]]]:
    """failure kind -> [(sample index, failure)], worst first."""
    out: dict[str, list[tuple[int, Failure]]] = defaultdict(list)
    layout.prepare(ctx, run)
    for i, (sample, rec) in enumerate(zip(ctx.benchmark.samples, run.result.samples, strict=True)):
        for f in layout.failures(sample, rec):
            out[f.kind].append((i, f))
    for items in out.values():
        items.sort(key=lambda t: (-t[1].severity, t[0]))
    return dict(out)


def gallery(
    ctx: ReportContext,
    layout: KindLayout,
    *,
    per_kind: int = 4,
    images_dir: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Sections {model, kind, count, items: [{sample, group, severity, detail, panels}]}."""
    sections = []
    for run in ctx.runs:
        t = layout.gallery_threshold(ctx, run)
        for kind, items in collect_failures(ctx, layout, run).items():
            shown = []
            for idx, failure in items[:per_kind]:
                sample = ctx.benchmark.samples[idx]
                panels = [
                    _panel(sample, pid, run, t, images_dir)
                    for pid in layout.gallery_prompts(sample, failure)
                    if any(p.id == pid for p in sample.prompts)
                ]
                shown.append({
                    "sample": sample.id,
                    "group": sample.group,
                    "severity": failure.severity,
                    "detail": failure.detail,
                    "panels": panels,
                })
            sections.append({"model": run.name, "kind": kind, "count": len(items), "items": shown})
    return sections


def _panel(
    sample: Sample, prompt_id: str, run: ModelRun, t: float | None, images_dir: str | Path | None
) -> dict[str, Any]:
    prompt = sample.prompt(prompt_id)
    ref = sample.images.get(prompt.image)
    gt = sample.gts.get(prompt.gt) if prompt.gt else None
    h, w = (gt.height, gt.width) if gt else ((ref.height, ref.width) if ref else (64, 64))
    gt_arr = gt.union().to_array() if gt and gt.masks else np.zeros((h, w), bool)
    pred = run.predictions.get(prompt_id)
    keep = [i for i in pred.instances if t is None or i.score >= t] if pred is not None else []
    n_inst = len(keep)
    # the kept instances are merged in RLE and decoded once (resized() is a no-op at the gt's size)
    pred_arr = union_all([i.mask.resized(h, w) for i in keep], h, w).to_array()
    base = _load_image(ref, images_dir, h, w)
    png = overlay_png(base, gt_arr, pred_arr)
    return {
        "prompt": prompt.text,
        "role": str(prompt.role) + (f" {prompt.level}" if prompt.level is not None else "")
        + (f" · {prompt.image} image" if len(sample.images) > 1 else ""),
        "instances": n_inst,
        "missing": pred is None,
        "max_score": pred.max_score if pred is not None else None,
        "src": "data:image/png;base64," + base64.b64encode(png).decode("ascii"),
    }


def _load_image(ref: ImageRef | None, images_dir: str | Path | None, h: int, w: int) -> np.ndarray:
    """The panel's image through the one decoder (:func:`masklens.core.files.images.read_image`), at the
    ground truth's size; a blank canvas when it has no readable file."""
    import cv2

    from masklens.core.errors import DataFormatError
    from masklens.core.files.images import read_image
    from masklens.core.files.paths import candidates_under

    candidates = []
    if ref is not None and ref.path is not None:
        candidates.append(Path(ref.path))  # checked against its root by the benchmark's loader
        if images_dir is not None:  # never an image outside --images (symlinks included)
            candidates += candidates_under(images_dir, [Path(ref.path).name])
    for c in candidates:
        if exists(c, file=True):
            try:
                check_image_header(c, what="gallery image")  # a huge header is refused before decoding
                img = read_image(c, (ref.height, ref.width) if ref is not None else None)
            except DataFormatError:
                continue
            if img.shape[:2] != (h, w):
                img = cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA)
            return img
    return np.full((h, w, 3), 235, np.uint8)  # blank canvas


def overlay_png(image: np.ndarray, gt: np.ndarray, pred: np.ndarray, *, alpha: float = 0.7) -> bytes:
    """Blend TP/FP/FN colours onto a faded copy of ``image`` (so the overlay stands out while
    the scene keeps its colours), shrink to a thumbnail, encode as PNG."""
    import cv2

    out = 0.5 * image.astype(np.float32) + 0.5 * 255.0
    for sel, colour in ((gt & pred, TP), (pred & ~gt, FP), (gt & ~pred, FN)):
        out[sel] = (1 - alpha) * out[sel] + alpha * np.asarray(colour, np.float32)
    out8: np.ndarray = out.astype(np.uint8)
    edges = gt.astype(np.uint8) - cv2.erode(gt.astype(np.uint8), np.ones((3, 3), np.uint8))
    out8[edges > 0] = FN
    h, w = out8.shape[:2]
    scale = min(1.0, THUMB / max(h, w))
    if scale < 1.0:
        out8 = cv2.resize(out8, (max(1, round(w * scale)), max(1, round(h * scale))),
                          interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".png", cv2.cvtColor(out8, cv2.COLOR_RGB2BGR))
    if not ok:  # pragma: no cover - cv2 always encodes uint8 RGB
        raise RuntimeError("PNG encoding failed")
    return buf.tobytes()
