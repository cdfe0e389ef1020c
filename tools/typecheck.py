"""Type-check masklens with mypy, as `make lint` does: ``python tools/typecheck.py [mypy args]``.

pyproject.toml maps ``masklens.core`` → ``core/`` and ``masklens.gui`` → ``gui/`` (package-dir), and
mypy cannot follow setuptools' editable finder, so this makes a folder of links,
``build/typecheck/masklens/{core,gui,resources}``, and runs mypy with ``[tool.mypy]`` of pyproject.toml,
whose ``mypy_path`` points there. Without arguments it checks both packages.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def link_tree(dest: Path = ROOT / "build" / "typecheck") -> Path:
    """``dest/masklens/{core,gui,resources}`` linked to the source folders; ``dest``."""
    package = dest / "masklens"
    package.mkdir(parents=True, exist_ok=True)
    for name in ("core", "gui", "resources"):
        link = package / name
        if link.is_symlink() or link.exists():
            if link.resolve() == (ROOT / name).resolve():
                continue
            link.unlink()
        link.symlink_to(ROOT / name, target_is_directory=True)
    return dest


def main(argv: list[str]) -> int:
    link_tree()
    args = argv or ["-p", "masklens.core", "-p", "masklens.gui"]
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), *args],
                          cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
