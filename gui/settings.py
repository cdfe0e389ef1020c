"""Persistent GUI settings: a versioned JSON file in the platform's config directory.

Written atomically (``core/files/io.py``); a missing, unreadable or older file yields the
defaults merged with whatever could be read, never an exception.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from masklens.core.errors import MasklensError
from masklens.core.files.io import atomic_write_json, read_json
from masklens.core.runtime import config

SETTINGS_VERSION = 1
MAX_RECENT = 10
MAX_HISTORY = 50

#: Okabe–Ito colours (colour-blind safe): TP, FP, FN, ground truth, and per-layer colours
DEFAULT_COLOURS: dict[str, str] = {
    "tp": "#009E73",
    "fp": "#D55E00",
    "fn": "#56B4E9",
    "gt": "#CC79A7",
    "gt2": "#F0E442",
    "pred": "#0072B2",
    "pred2": "#E69F00",
}


@dataclass
class Settings:
    """Everything the window remembers between sessions."""

    version: int = SETTINGS_VERSION
    geometry: str = ""  # QMainWindow.saveGeometry() as base64 (read when window_rect is absent)
    window_rect: list[int] = field(default_factory=list)  # x, y, width, height of the window itself
    maximized: bool = False
    window_state: str = ""  # QMainWindow.saveState() (docks, toolbars) as base64
    #: the side docks' chosen widths (dock name → px): they come back when the window widens
    dock_widths: dict[str, int] = field(default_factory=dict)
    recent: list[dict[str, Any]] = field(default_factory=list)  # {"kind", "argv", "label"}
    model: str = "demo"
    model_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    params: dict[str, dict[str, float]] = field(default_factory=dict)  # kind -> {param: value}
    colours: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_COLOURS))
    gt_opacity: float = 0.45
    pred_opacity: float = 0.55
    outlines: bool = True
    prompt_history: list[str] = field(default_factory=list)
    #: the Python of the environment the torch models run in (window/model_environment.py); "":
    #: the model_python setting, else the window's own
    model_python: str = ""
    reviewer: str = ""  # the Review dock's reviewer name ("": the login name)
    #: per benchmark: attached prediction files, compared sets, failure filter, tab (compare_sets.py)
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def path(cls) -> Path:
        return config.config_dir() / "gui-settings.json"

    @classmethod
    def load(cls, path: Path | None = None) -> tuple[Settings, str | None]:
        """Settings from disk plus a warning (None when all went well)."""
        p = path or cls.path()
        if not p.exists():
            return cls(), None
        try:
            data = read_json(p)
        except MasklensError as exc:
            return cls(), f"settings ignored: {exc}"
        if not isinstance(data, dict):
            return cls(), f"settings ignored: {p}: expected a JSON object"
        known = {f.name for f in fields(cls)}
        out = cls()
        for key, value in data.items():
            if key in known and key != "version" and isinstance(value, type(getattr(out, key))):
                setattr(out, key, value)
        out.colours = {**DEFAULT_COLOURS, **{k: v for k, v in out.colours.items() if isinstance(v, str)}}
        warn = None
        if data.get("version") != SETTINGS_VERSION:
            warn = f"settings from version {data.get('version')!r} migrated to {SETTINGS_VERSION}"
        return out, warn

    def save(self, path: Path | None = None) -> None:
        atomic_write_json(path or self.path(), asdict(self))

    # ------------------------------------------------------------ helpers
    def add_recent(self, kind: str, argv: list[str], label: str) -> None:
        entry = {"kind": kind, "argv": list(argv), "label": label}
        self.recent = [entry] + [r for r in self.recent if r.get("argv") != entry["argv"]]
        del self.recent[MAX_RECENT:]

    def add_history(self, text: str) -> None:
        text = text.strip()
        if text:
            self.prompt_history = [text] + [t for t in self.prompt_history if t != text]
            del self.prompt_history[MAX_HISTORY:]
