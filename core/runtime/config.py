"""masklens' settings: every ``MASKLENS_*`` environment variable and the config file, in one table.

Each setting has a name (its key in ``config.toml``), a type, a default, a line of documentation
and an environment variable (``MASKLENS_`` + the name in capitals). A value comes from, in order:
the environment variable, the config file, the default. The config file is ``config.toml`` in
the user config folder (``$MASKLENS_CONFIG_DIR`` or platformdirs' ``user_config_dir``), a flat
TOML table of ``name = value`` lines.

Values are read when asked for, never cached beyond the file's own contents (re-read when the
file changes): a test or a user can change the environment without restarting anything. A bad
value — a broken file, an unknown name in it, a wrong type, a number out of range — raises
:class:`ConfigError`, one line naming the file or the variable and the setting.

docs/configuration.md is :func:`markdown_page` (tests/core/test_config.py keeps it current).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from masklens.core.errors import MasklensError

PREFIX = "MASKLENS_"
FILENAME = "config.toml"


class ConfigError(MasklensError):
    """A setting's value (from the environment or the config file) cannot be used."""


def _platform_dir(which: str, **kwargs: Any) -> Callable[[], Path]:
    def default() -> Path:
        import platformdirs

        return Path(getattr(platformdirs, which)("masklens", **kwargs))

    return default


def is_program(path: Path) -> bool:
    """Whether ``path`` is an executable file (what a "program" setting must name)."""
    return path.is_file() and os.access(path, os.X_OK)


@dataclass(frozen=True)
class Setting:
    """One setting: its name (the config file's key), its type, its default and what it does."""

    name: str
    #: "int" (a positive whole number), "float" (a positive number), "path" (a folder),
    #: "program" (an executable file), or "choice"
    type: str
    #: the value, or a function giving it (the platform's folders, known only where it runs)
    default: Any
    doc: str
    #: what the docs and ``masklens config`` show as the default of a computed one
    default_text: str = ""
    choices: tuple[str, ...] = ()
    #: other spellings accepted for a choice -> the choice they mean
    aliases: Mapping[str, str] = field(default_factory=dict)
    #: False: only the environment can set it (the config folder holds the config file)
    in_file: bool = True

    @functools.cached_property
    def env(self) -> str:
        return PREFIX + self.name.upper()

    def default_value(self) -> Any:
        return self.default() if callable(self.default) else self.default

    def describe_default(self) -> str:
        return self.default_text or str(self.default)

    def type_text(self) -> str:
        if self.type == "choice":
            return " | ".join(self.choices)
        return {"int": "positive integer", "float": "positive number", "path": "folder",
                "program": "program file"}[self.type]

    def parse(self, raw: Any, *, where: str, path: Path | None = None) -> Any:
        """``raw`` (a string from the environment, a TOML value from the file) as this setting's
        type; a ConfigError naming ``where`` (the variable, or the file and key) otherwise."""

        def bad(why: str) -> ConfigError:
            return ConfigError(f"{where}: {why}", path=path)

        from_env = isinstance(raw, str) and path is None
        if self.type in ("int", "float"):
            if isinstance(raw, bool) or (not from_env and not isinstance(raw, (int, float))):
                raise bad(f"expected a number, got {raw!r}")
            try:
                number = float(raw) if from_env else raw
                value = int(number) if self.type == "int" else float(number)
            except (ValueError, OverflowError):
                raise bad(f"{raw!r} is not a number") from None
            if self.type == "int" and not from_env and isinstance(raw, float) and raw != value:
                raise bad(f"expected a whole number, got {raw!r}")
            if not value > 0:
                raise bad(f"{raw!r} must be positive")
            return value
        if not isinstance(raw, str):
            raise bad(f"expected a string, got {raw!r}")
        if self.type == "path":
            if not raw.strip():
                raise bad("expected a folder, got an empty string")
            return Path(raw).expanduser()
        if self.type == "program":
            program = Path(raw.strip()).expanduser()
            if not is_program(program):
                raise bad(f"{raw!r} is not an executable file")
            return program
        choice = raw.strip().lower()
        choice = self.aliases.get(choice, choice)
        if choice not in self.choices:
            raise bad(f"must be {', '.join(self.choices[:-1])} or {self.choices[-1]}, got {raw!r}")
        return choice


SETTINGS: tuple[Setting, ...] = (
    Setting("max_mask_side", "int", 1 << 15,
            "largest side of a mask, score map or image, in pixels"),
    Setting("max_mask_pixels", "int", 1 << 28,
            "largest mask in pixels (height × width; a decoded boolean mask of 256 MiB)"),
    Setting("polygon_margin", "float", 1.0,
            "polygon coordinates must lie within [-m·side, (1 + m)·side] of their image"),
    Setting("max_json_bytes", "int", 2 << 30, "largest JSON input file, in bytes"),
    Setting("max_json_depth", "int", 64, "deepest nesting of arrays and objects in a JSON input file"),
    Setting("max_image_bytes", "int", 1 << 28,
            "largest decoded image (height × width × 3 bytes of RGB), in bytes"),
    Setting("max_batch_bytes", "int", 1 << 30,
            "largest decoded size of the images decoded together (one batch), in bytes"),
    Setting("cache_dir", "path", _platform_dir("user_cache_dir", appauthor=False),
            "the prediction cache folder (`--cache-dir` overrides it per command)",
            default_text="the user cache folder (Linux: ~/.cache/masklens)"),
    Setting("cache_mode", "choice", "auto",
            "how processes share the prediction cache: one WAL database (wal), a file per process "
            "merged at the end (files), or picked by the folder's filesystem (auto: files on a "
            "network filesystem such as NFS, CIFS, Lustre, GPFS or BeeGFS)", choices=("auto", "wal", "files")),
    Setting("data_dir", "path", _platform_dir("user_data_dir"),
            "where review stores go when a benchmark's own folder cannot take them (and the demo's)",
            default_text="the user data folder (Linux: ~/.local/share/masklens)"),
    Setting("config_dir", "path", _platform_dir("user_config_dir", appauthor=False),
            "the folder of config.toml and the window's settings (environment only)",
            default_text="the user config folder (Linux: ~/.config/masklens)", in_file=False),
    Setting("log_dir", "path", _platform_dir("user_log_dir", appauthor=False),
            "the folder of the log file masklens.log",
            default_text="the user log folder (Linux: ~/.local/state/masklens/log)"),
    Setting("model_process", "choice", "separate",
            "where the window runs the torch models: a process of their own (separate), or the "
            "window's own process (in-process, for debugging a backend)",
            choices=("separate", "in-process"),
            aliases={"inprocess": "in-process", "0": "in-process", "off": "in-process"}),
    Setting("model_python", "program", None,
            "the Python whose environment runs the window's torch models (its process of its own): "
            "one with `masklens[models]` installed, e.g. a venv's bin/python, for a masklens "
            "installed without torch (the desktop bundle); the window's Model environment… sets it too",
            default_text="the window's own Python"),
)

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
ENVIRONMENT: dict[str, Setting] = {s.env: s for s in SETTINGS}


@dataclass(frozen=True)
class Value:
    """A setting's value and where it came from: "default", "file" (``origin`` the file's path)
    or "environment" (``origin`` the variable)."""

    setting: Setting
    value: Any
    source: str
    origin: str = ""

    def describe_source(self) -> str:
        return self.source + (f" {self.origin}" if self.origin else "")


@dataclass(frozen=True)
class Settings:
    """Every setting's value, typed (:func:`current`). ``sources`` says where each came from."""

    max_mask_side: int
    max_mask_pixels: int
    polygon_margin: float
    max_json_bytes: int
    max_json_depth: int
    max_image_bytes: int
    max_batch_bytes: int
    cache_dir: Path
    cache_mode: str
    data_dir: Path
    config_dir: Path
    log_dir: Path
    model_process: str
    model_python: Path | None
    sources: Mapping[str, Value] = field(repr=False, compare=False, default_factory=dict)


def config_dir() -> Path:
    """``$MASKLENS_CONFIG_DIR`` or platformdirs' user config folder for masklens."""
    setting = BY_NAME["config_dir"]
    raw = os.environ.get(setting.env)
    if raw is not None and raw.strip():
        return setting.parse(raw, where=setting.env)
    return _user_config_dir(os.environ.get("XDG_CONFIG_HOME"))


@functools.lru_cache(maxsize=8)
def _user_config_dir(xdg_config_home: str | None) -> Path:
    """platformdirs' answer, once per ``$XDG_CONFIG_HOME`` (the only input it reads that may
    change while masklens runs): the limits look for the file at every mask."""
    return BY_NAME["config_dir"].default_value()


def config_path() -> Path:
    """Where the config file is (whether or not there is one)."""
    return config_dir() / FILENAME


_file_lock = threading.Lock()
_file_cache: dict[Path, tuple[tuple[int, int], dict[str, Any]]] = {}


def file_values(path: Path | None = None) -> dict[str, Any]:
    """The config file's settings, checked (every key known, every value of its type); {} when
    there is no file (or its folder is not this user's to look into). Read again only when the
    file changed."""
    import tomllib

    path = path or config_path()
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except PermissionError:  # a config folder this user may not look into has no file for it
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read the config file: {exc.strerror or exc}", path=path) from None
    stamp = (st.st_mtime_ns, st.st_size)
    with _file_lock:
        cached = _file_cache.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", path=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the config file: {getattr(exc, 'strerror', None) or exc}",
                          path=path) from None
    values: dict[str, Any] = {}
    for key, raw in data.items():
        setting = BY_NAME.get(key)
        if setting is None or not setting.in_file:
            why = "only the environment variable sets it" if setting else "unknown setting"
            known = ", ".join(s.name for s in SETTINGS if s.in_file)
            raise ConfigError(f"key '{key}': {why} (the file's keys: {known})", path=path)
        values[key] = setting.parse(raw, where=f"key '{key}'", path=path)
    with _file_lock:
        _file_cache[path] = (stamp, values)
    return values


def _read(chosen: list[Setting]) -> list[tuple[Setting, Any, str, str]]:
    """(setting, value, source, origin) of each, read now (the limits ask at every mask: lean)."""
    out: list[tuple[Setting, Any, str, str]] = []
    path: Path | None = None
    from_file: dict[str, Any] | None = None
    for setting in chosen:
        raw = os.environ.get(setting.env)
        if raw is not None and raw.strip():  # empty: not set
            out.append((setting, setting.parse(raw, where=setting.env), "environment", setting.env))
            continue
        if setting.in_file:
            if from_file is None:
                path = config_path()
                from_file = file_values(path)
            if setting.name in from_file:
                out.append((setting, from_file[setting.name], "file", str(path)))
                continue
        out.append((setting, setting.default_value(), "default", ""))
    return out


def values(*names: str) -> dict[str, Value]:
    """The named settings (all of them when none is named), each from the environment, the
    config file or its default, with its source, read now."""
    chosen = [BY_NAME[n] for n in names] if names else list(SETTINGS)
    return {s.name: Value(s, value, source, origin) for s, value, source, origin in _read(chosen)}


def read(*names: str) -> list[Any]:
    """The named settings' values, in order, read now."""
    return [value for _, value, _, _ in _read([BY_NAME[n] for n in names])]


def get(name: str) -> Any:
    """One setting's value, read now."""
    return _read([BY_NAME[name]])[0][1]


def current() -> Settings:
    """Every setting, read now, with where each value came from."""
    found = values()
    return Settings(**{name: v.value for name, v in found.items()}, sources=found)


#: the config file the page's example shows (``masklens config`` prints the real one)
EXAMPLE_PATH = "~/.config/masklens/config.toml"
#: the page's example config file: (key, value, comment)
EXAMPLE_FILE: tuple[tuple[str, Any, str], ...] = (
    ("max_image_bytes", 1 << 29, "512 MiB images"),
    ("cache_dir", "/scratch/me/masklens-cache", "a fast disk of the cluster"),
    ("cache_mode", "files", "one file per process, merged at the end"),
)


def example_toml() -> str:
    """The example config.toml of docs/configuration.md (tests/core/test_config.py reads it back)."""
    width = max(len(f"{key} = {_toml(value)}") for key, value, _ in EXAMPLE_FILE)
    lines = [f"# {EXAMPLE_PATH}"]
    lines += [f"{f'{key} = {_toml(value)}':<{width}}  # {comment}" for key, value, comment in EXAMPLE_FILE]
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def _markdown_type(setting: Setting) -> str:
    """The type as a table cell: a choice's values as words (a ``|`` would end the cell)."""
    if setting.type != "choice":
        return setting.type_text()
    named = [f"`{c}`" for c in setting.choices]
    return f"{', '.join(named[:-1])} or {named[-1]}"


def markdown_table() -> str:
    """The settings as docs/configuration.md lists them."""
    rows = ["| Setting (config.toml key) | Environment variable | Type | Default | What it does |",
            "|---|---|---|---|---|"]
    for s in SETTINGS:
        key = f"`{s.name}`" if s.in_file else f"`{s.name}` (environment only)"
        default = f"`{s.default}`" if s.type == "choice" else s.describe_default()
        rows.append(f"| {key} | `{s.env}` | {_markdown_type(s)} | {default} | {s.doc} |")
    return "\n".join(rows) + "\n"


def markdown_page() -> str:
    """docs/configuration.md, whole: how settings are found and set, an example file, the table.
    ``python -c 'from masklens.core.runtime.config import markdown_page; print(markdown_page(),
    end="")' > docs/configuration.md`` writes it; tests/core/test_config.py keeps it current."""
    folder = BY_NAME["config_dir"]
    file_error = ConfigError("key 'cache_mode': " + _error_of(BY_NAME["cache_mode"], "sometimes"),
                             path=EXAMPLE_PATH.replace("~", "/home/me"))
    env_error = ConfigError(f"{BY_NAME['max_mask_side'].env}: "
                            + _error_of(BY_NAME["max_mask_side"], "big"))
    return f"""\
# Configuration

<!-- generated by masklens.core.runtime.config.markdown_page: change the settings or the generator there, not this page (tests/core/test_config.py checks it) -->

Every setting of masklens has a name, a type and a default ([the table below](#settings)). A
setting's value comes from the first of these that sets it:

1. the **environment variable** `{PREFIX}<NAME>` (the name in capitals, e.g. `{BY_NAME["cache_dir"].env}`);
2. the **config file** `{FILENAME}`, one `name = value` line per setting;
3. the setting's **default**.

An environment variable set to an empty string counts as not set.

## Where the config file is

`{FILENAME}` lies in the user config folder (Linux: `{EXAMPLE_PATH}`; the platform's own
folder on macOS and Windows). The `{folder.env}` environment variable moves the folder. There is
no file until you write one.

`masklens config` prints the file's path on its first line (`config file: PATH`, with `(none)`
when there is no file there yet), then every setting, its value and where that value came from:
`default`, `file PATH` or `environment VARIABLE`. `masklens config --json` gives the same as one
JSON object (`file`, `file_exists`, `settings`). It only reads.

## An example config.toml

```toml
{example_toml()}```

## When a value cannot be used

A file that is not valid TOML, a key the file does not know, a value of the wrong type, a number
that is not positive or a choice that does not exist stops every command with one line naming
the file and the key (or the variable):

```text
masklens: error: {file_error}
masklens: error: {env_error}
```

Settings are read when they are used, so a changed environment or file takes effect in the next
command (and the limits at the next file read) without restarting anything.

## Settings

{markdown_table()}
The limits (`max_*`, `polygon_margin`) are checked before anything is allocated or decoded: an
input over a limit is refused with a message naming the file, the record and the field, and the
setting to raise if the input is intended ([reliability.md](reliability.md#limits)).
"""


def _error_of(setting: Setting, raw: str) -> str:
    """What ``setting`` says of the bad value ``raw`` (the page shows real messages)."""
    try:
        setting.parse(raw, where="")
    except ConfigError as exc:
        return exc.detail.removeprefix(": ")
    raise AssertionError(f"{raw!r} is a valid {setting.name}")
