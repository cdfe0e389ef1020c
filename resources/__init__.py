"""Bundled data: the procedurally generated demo benchmark (resources/demo) and the desktop
files (resources/desktop: icon and .desktop entry, drawn by packaging/make_desktop_files.py)."""

from pathlib import Path

RESOURCES_DIR = Path(__file__).resolve().parent
DEMO_DIR = RESOURCES_DIR / "demo"
DESKTOP_DIR = RESOURCES_DIR / "desktop"
ICON_SVG = DESKTOP_DIR / "masklens.svg"
ICON_PNG = DESKTOP_DIR / "masklens.png"
