"""Score labels are readable: their font is the application's, bold — a QFont made when the module
was imported (before the QApplication existed) had no size and drew every label as a dot."""

from __future__ import annotations

import json
import os
import subprocess
import sys

_CODE = (
    "import json\n"
    "from masklens.gui.canvas.score_label import new_label, show_text\n"  # imported first
    "from PySide6.QtWidgets import QApplication\n"
    "app = QApplication([])\n"
    "label = new_label()\n"
    "show_text(label, '0.90', '#0072B2')\n"
    "r = label.rect()\n"
    "print(json.dumps([r.width(), r.height(), label.childItems()[0].font().bold()]))\n"
)


def test_a_label_made_in_a_fresh_process_has_the_applications_font_size():
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True, env=env,
                         timeout=120, check=True)
    width, height, bold = json.loads(out.stdout.strip().splitlines()[-1])
    assert bold
    assert height >= 8 and width >= 20  # "0.90" in the default font: ~38 × 14 px
