"""mkdocs hook (mkdocs.yml ``hooks:``): the API reference shows Sphinx cross-reference roles in the
docstrings (``:func:`score```, ``:mod:`masklens.core```) as plain code, not with the role's
name in front. The docstrings keep the roles for ``help()`` and Sphinx-aware readers."""

from __future__ import annotations

import re
from typing import Any

ROLE = re.compile(r":(?:func|mod|class|meth|attr|data|obj|exc):(?=<code>)")


def on_page_content(html: str, **_: Any) -> str:
    """``html`` without the role prefix before each inline code span."""
    return ROLE.sub("", html)
