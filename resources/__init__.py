"""Bundled data: the procedurally generated demo benchmark (resources/demo)."""

from pathlib import Path

RESOURCES_DIR = Path(__file__).resolve().parent
DEMO_DIR = RESOURCES_DIR / "demo"
