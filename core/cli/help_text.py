"""``--help`` in plain text: the descriptions come from module docstrings and help strings
written in reST/Markdown (``--pred``, `masklens models`, :func:`x`), which a terminal shows raw.
:class:`PlainHelpFormatter` prints ``x`` as x, `x` as 'x' and :role:`x` as x."""

from __future__ import annotations

import argparse
import re

_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_SINGLE = re.compile(r"`([^`]+)`")


def plain(text: str) -> str:
    """``text`` without reST/Markdown inline markup."""
    return _SINGLE.sub(r"'\1'", _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text)))


class PlainHelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, with :func:`plain` applied to descriptions, epilogs and helps."""

    def _format_text(self, text: str) -> str:
        return super()._format_text(plain(text))

    def _expand_help(self, action: argparse.Action) -> str:
        return plain(super()._expand_help(action))


def use_plain_help(parser: argparse.ArgumentParser) -> None:
    """Give ``parser`` and every sub-parser under it the plain formatter."""
    parser.formatter_class = PlainHelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                use_plain_help(sub)
