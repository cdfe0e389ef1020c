"""Draw masklens' icon and write its desktop files into resources/desktop/ (deterministic).

    python packaging/make_desktop_files.py

``masklens.svg`` is the icon (a lens over a segmentation mask: a cyan mask outlined in white,
half under a lens); ``masklens.png`` is the same SVG rendered at 256 px with Qt's SVG renderer;
``masklens.desktop`` is the freedesktop.org entry (one main category, Science; it opens masklens
workspace files); ``masklens-workspace.xml`` is the shared-mime-info type of a workspace file
(``*.masklens``, JSON: the kind, its input files, the prediction sets and the review store);
``io.github.masklens.masklens.metainfo.xml`` is the AppStream metainfo software centres read.
The window uses the icon, ``masklens install-desktop`` installs them into the user's XDG
folders, and ``make bundle`` packs them beside the bundle.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "resources" / "desktop"

SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256">
  <rect x="8" y="8" width="240" height="240" rx="44" fill="#1f2a3a"/>
  <path d="M52 176 C52 110 92 64 140 70 C186 76 204 118 196 160 C188 200 150 210 110 204 C80 200 52 196 52 176 Z"
        fill="#2ec4b6" fill-opacity="0.85" stroke="#ffffff" stroke-width="6"/>
  <circle cx="150" cy="112" r="54" fill="#ffffff" fill-opacity="0.18" stroke="#ffd166" stroke-width="14"/>
  <line x1="190" y1="152" x2="224" y2="186" stroke="#ffd166" stroke-width="20" stroke-linecap="round"/>
</svg>
"""

DESKTOP = """[Desktop Entry]
Type=Application
Name=masklens
GenericName=Segmentation model inspector
Comment=Inspect, prompt and score promptable and open-vocabulary segmentation models
Exec=masklens gui %f
Icon=masklens
Terminal=false
Categories=Science;ImageProcessing;
MimeType=application/x-masklens-workspace;
Keywords=segmentation;benchmark;mask;SAM;evaluation;
StartupWMClass=masklens
"""

MIME = """<?xml version="1.0" encoding="UTF-8"?>
<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">
  <mime-type type="application/x-masklens-workspace">
    <comment>masklens workspace</comment>
    <sub-class-of type="application/json"/>
    <glob pattern="*.masklens"/>
  </mime-type>
</mime-info>
"""

METAINFO = """<?xml version="1.0" encoding="UTF-8"?>
<component type="desktop-application">
  <id>io.github.masklens.masklens</id>
  <metadata_license>CC0-1.0</metadata_license>
  <project_license>MIT</project_license>
  <name>masklens</name>
  <summary>Inspect, prompt and score segmentation models on benchmarks</summary>
  <description>
    <p>
      masklens opens promptable and open-vocabulary segmentation benchmarks (CAFE, SA-Co/Gold,
      HalluSegBench, CGEBench, R2SM, OVS) with a model's predictions, shows each sample's masks
      and readouts, runs typed prompts through a model, and records reviewers' verdicts.
    </p>
    <p>
      The scores follow each benchmark's own protocol; reports and exports (COCO, FiftyOne, CSV)
      carry them to other tools.
    </p>
  </description>
  <launchable type="desktop-id">masklens.desktop</launchable>
  <provides>
    <binary>masklens</binary>
    <mediatype>application/x-masklens-workspace</mediatype>
  </provides>
  <categories>
    <category>Science</category>
    <category>ImageProcessing</category>
  </categories>
  <keywords>
    <keyword>segmentation</keyword>
    <keyword>benchmark</keyword>
  </keywords>
  <content_rating type="oars-1.1"/>
  <releases>
    <release version="0.1.0" date="2026-11-28"/>
  </releases>
</component>
"""


def render_png(svg: Path, png: Path, size: int = 256) -> None:
    """Render ``svg`` to a ``size``-pixel PNG with Qt (run with QT_QPA_PLATFORM=offscreen)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    QSvgRenderer(str(svg)).render(painter)
    painter.end()
    if not image.save(str(png)):
        raise SystemExit(f"cannot write {png}")


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "masklens.svg").write_text(SVG)
    (OUT / "masklens.desktop").write_text(DESKTOP)
    (OUT / "masklens-workspace.xml").write_text(MIME)
    (OUT / "io.github.masklens.masklens.metainfo.xml").write_text(METAINFO)
    render_png(OUT / "masklens.svg", OUT / "masklens.png")
    print(f"wrote {OUT}/masklens.svg, masklens.png, masklens.desktop, masklens-workspace.xml, "
          "io.github.masklens.masklens.metainfo.xml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
