"""Render the readout cards of the six demo benchmarks into docs/images/readout-cards.png.

    QT_QPA_PLATFORM=offscreen python tools/make_card_images.py [--out FILE]

Each card is grabbed from the real window (default settings, nothing saved) on a sample whose
verdict is worth showing; CGEBench also runs a typed hypernym so the side-by-side pair shows.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
#: (kind, sample index, typed prompt (text, role, level) or None)
SHOTS = [
    ("cafe", 7, None),  # TA-FN with SoftSwap and ACS
    ("hallusegbench", 10, None),  # both hallucinations
    ("cgebench", 2, ("object", "hypernym", 3)),  # c(3) = 0; the typed "object" covers G
    ("r2sm", 6, None),  # an amodal query answered with the modal mask
    ("pcs", 3, None),  # IL TP with three instances
    ("ovs", 0, None),  # out-matched pairs at τ*
]


def grab_cards(kind: str, index: int, prompt: tuple[str, str, int | None] | None) -> Image.Image:
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QApplication

    from masklens.core.schema import Role
    from masklens.gui.prompts.prompt_bar import PromptRequest
    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    w = MainWindow(Settings(), persist=False)
    w.resize(1600, 1000)
    w.show()
    w.commands.open_demo(kind, sync=True)
    w.state.set_index(index)
    if prompt is not None:
        w.commands.run_prompt(PromptRequest(prompt[0], Role(prompt[1]), prompt[2], None, "demo"), sync=True)
    for _ in range(5):
        app.processEvents()
    box = w.readout_panel.deck.widget()
    area = QRect()
    for child in box.findChildren(type(box)):
        if child.parentWidget() is box and child.isVisible():
            area = area.united(child.geometry())
    image = box.grab(area.adjusted(-2, -2, 2, 2)).toImage()
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"masklens-card-{kind}.png"
    image.save(str(path))
    w.close()
    return Image.open(path).convert("RGB")


def montage(images: list[Image.Image], columns: int = 3, gap: int = 12) -> Image.Image:
    rows = [images[i:i + columns] for i in range(0, len(images), columns)]
    width = max(sum(i.width for i in r) + gap * (len(r) - 1) for r in rows)
    heights = [max(i.height for i in r) for r in rows]
    out = Image.new("RGB", (width, sum(heights) + gap * (len(rows) - 1)), (255, 255, 255))
    y = 0
    for row, h in zip(rows, heights, strict=True):
        x = 0
        for im in row:
            out.paste(im, (x, y))
            x += im.width + gap
        y += h + gap
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "readout-cards.png")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    out = montage([grab_cards(*shot) for shot in SHOTS])
    out.save(args.out, optimize=True)
    print(f"wrote {args.out} ({out.width}x{out.height})")


if __name__ == "__main__":
    main()
