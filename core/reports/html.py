"""The HTML report: one self-contained file (CSS inline, images as data URIs), autoescaped."""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from masklens.core.files.io import json_safe


def fmt(value: Any) -> str:
    """Table cell text: fractions with 4 decimals, counts as integers, missing as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "—" if not math.isfinite(value) else f"{value:.4f}"
    return str(value)


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def render_html(context: dict[str, Any]) -> str:
    """Render ``templates/report.html.j2``; every user-supplied string is escaped (autoescape)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("masklens.core.reports", "templates"),
        autoescape=True,  # prompts, notes, file and model names are user-supplied
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    from masklens.core.reports.layout import split_wide

    env.filters["fmt"] = fmt
    env.filters["split_wide"] = split_wide
    env.filters["data_uri"] = data_uri
    env.filters["pretty"] = lambda v: json.dumps(json_safe(v), indent=2, ensure_ascii=False)
    return env.get_template("report.html.j2").render(**context)
