"""`masklens config`: every setting (docs/configuration.md), its value and where the value came
from — the default, the config file, or an environment variable. It only reads."""

from __future__ import annotations

import argparse
import json


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "config", help="list the settings, their values and where each value came from",
        description="List every setting, its value and its source: the default, the config file "
                    "(config.toml in the user config folder) or the environment variable "
                    "(MASKLENS_<NAME>), which wins over the file. Writes nothing.")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from masklens.core.runtime import config

    path = config.config_path()
    found = config.values()  # a bad file or value raises ConfigError: one line, exit 2
    if args.json:
        print(json.dumps({
            "file": str(path),
            "file_exists": path.is_file(),
            "settings": [{"name": v.setting.name, "value": _plain(v.value), "source": v.source,
                          "origin": v.origin, "env": v.setting.env, "type": v.setting.type_text(),
                          "default": v.setting.describe_default(), "doc": v.setting.doc}
                         for v in found.values()],
        }, indent=2))
        return 0
    print(f"config file: {path}" + ("" if path.is_file() else " (none)"))
    width = max(len(name) for name in found)
    shown = {name: str(_plain(v.value)) for name, v in found.items()}
    value_width = max(len(text) for text in shown.values())
    for name, v in found.items():
        print(f"{name:<{width}}  {shown[name]:<{value_width}}  {v.describe_source()}")
    return 0


def _plain(value: object) -> object:
    return value if isinstance(value, (int, float, str)) else str(value)
