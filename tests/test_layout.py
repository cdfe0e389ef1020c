"""Project invariants: core stays free of Qt and torch at import time; packaging is complete."""

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_core_imports_no_qt_and_no_torch():
    code = (
        "import sys, importlib, pkgutil\n"
        "import masklens.core as c\n"
        "for m in pkgutil.walk_packages(c.__path__, 'masklens.core.'):\n"
        "    if not m.name.endswith('__main__'): importlib.import_module(m.name)\n"
        "bad = sorted(k for k in sys.modules if k.split('.')[0] in "
        "('PySide6','PyQt5','PyQt6','superqt','qtpy','torch','transformers','sam2','huggingface_hub'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"masklens.core imported at import time: {out.stdout}"


def test_core_sources_never_import_qt():
    offenders = []
    for path in (ROOT / "core").rglob("*.py"):
        for line in path.read_text().splitlines():
            s = line.strip()
            if s.startswith(("import ", "from ")) and any(
                q in s.split()[1] for q in ("PySide6", "PyQt", "superqt", "qtpy")
            ):
                offenders.append(f"{path}: {s}")
    assert offenders == []


def test_every_subpackage_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = set()
    for top, name in (("core", "masklens.core"), ("gui", "masklens.gui")):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top)
            found.add(".".join([name, *rel.parts]) if rel.parts else name)
    assert found <= listed, f"add to pyproject [tool.setuptools] packages: {sorted(found - listed)}"
