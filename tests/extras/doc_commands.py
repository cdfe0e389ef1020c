"""The `masklens …` command lines of the README and docs/*.md, as a user copies them: every code
block (fenced or indented), ``\\`` continuations joined, a leading ``$ `` and a trailing ``# …``
comment dropped. Each line is classified:

- **literal**: it runs as written from the repository root (the demo's files, or files an
  earlier line of the same page writes); optional ``[…]`` groups are left out, as a user who
  copies the line without them would;
- **template**: it holds placeholders (``ANN``, ``OWNER/NAME``, ``…``, ``<…>``, ``$VAR``, or
  input files such as ``ann.json`` that stand for the user's own) — not run, except that a line
  needing ``[models]`` must still say so in the core install.

``extra`` is the pip extra a line needs: ``models`` (a model other than ``demo``/``replay``,
``masklens models``), ``gui`` (``gui``, ``install-desktop``), ``hub`` (an ``hf://`` path),
``ray`` (``--ray``) or None (the core install).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("README.md", "docs/*.md", "docs/formats/*.md")
#: a word that stands for the user's own value (OWNER, ANN, DIR, KIND, OUT.json, PRED.json …)
_PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]+(\.json)?")
_OPTIONAL = re.compile(r"\s*\[[^\[\]]*\]")
#: flags whose value is written, not read (its file need not exist before)
OUTPUT_FLAGS = ("--out", "--screenshot")
#: flags whose value is read from a file or folder
INPUT_FLAGS = ("--ann", "--gt", "--data", "--pred", "--pred-dir", "--root", "--images", "--store", "--reviews")


@dataclass(frozen=True)
class DocCommand:
    page: str  # e.g. "docs/demo.md"
    line: int  # 1-based line of the block's start in the page
    text: str  # as documented (continuations joined, comment dropped)
    command: str  # what is run: optional groups left out
    extra: str | None
    literal: bool

    @property
    def words(self) -> list[str]:
        return shlex.split(self.command)

    @property
    def argv(self) -> list[str]:
        """The words after ``masklens``, up to a ``>`` redirection."""
        words = self.words
        return words[1:words.index(">")] if ">" in words else words[1:]

    @property
    def redirect(self) -> str | None:
        """The file a ``> FILE`` redirection writes (``~`` kept), if any."""
        words = self.words
        return words[words.index(">") + 1] if ">" in words[:-1] else None

    @property
    def interactive(self) -> bool:
        """`masklens gui` without --screenshot: the window stays open until the user closes it."""
        return self.argv[:1] == ["gui"] and "--screenshot" not in self.argv

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.text}"


def _blocks(text: str) -> list[tuple[int, str]]:
    """(line number, body) of every fenced block and every indented block outside them."""
    out = []
    for m in re.finditer(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M):
        out.append((text.count("\n", 0, m.start()) + 2, m.group(1)))
    lines = text.splitlines()
    fenced = False
    start, cur = 0, []
    for i, line in enumerate(lines, 1):
        if line.startswith("```"):
            fenced = not fenced
        indented = not fenced and line.startswith("    ") and not line.lstrip().startswith(("- ", "* ", "|"))
        if indented:
            start = start or i
            cur.append(line[4:])
            continue
        if cur:
            out.append((start, "\n".join(cur)))
        start, cur = 0, []
    if cur:
        out.append((start, "\n".join(cur)))
    return out


def _extra(command: str, argv0: str) -> str | None:
    if "hf://" in command:
        return "hub"
    if argv0 in ("gui", "install-desktop"):
        return "gui"
    if argv0 == "models":  # listing the backends and checkpoints needs only the hub client
        return "hub"
    models = re.findall(r"--model[ =](\S+)", command)
    if any(m not in ("demo", "replay") for m in models):
        return "models"
    if re.search(r"--ray\b", command):
        return "ray"
    return None


def _inputs(words: list[str]) -> list[str]:
    """The values of input flags, and bare arguments that look like files (review stores)."""
    found = [words[i + 1] for i, w in enumerate(words[:-1]) if w in INPUT_FLAGS]
    outputs = {words[i + 1] for i, w in enumerate(words[:-1]) if w in OUTPUT_FLAGS}
    found += [w for w in words if not w.startswith("-") and re.search(r"\.(json|sqlite|csv)$", w)
              and w not in found and w not in outputs]
    return found


def documented_commands(root: Path = ROOT) -> list[DocCommand]:
    """Every `masklens …` line of the pages, in page order; literal ones judged against the
    repository (``root``) plus what earlier literal lines of the same page write."""
    pages = sorted({p for pattern in PAGES for p in root.glob(pattern)}, key=lambda p: (p.name != "README.md", p))
    out: list[DocCommand] = []
    for page in pages:
        written: set[str] = set()
        for start, body in _blocks(page.read_text(encoding="utf-8")):
            body = re.sub(r"\\\n\s*", " ", body)
            for line in body.splitlines():
                text = line.strip().removeprefix("$ ")
                if not text.startswith("masklens "):
                    continue
                text = re.sub(r"\s+#\s.*$", "", text).strip()
                command = _OPTIONAL.sub("", text).strip()
                try:
                    words = shlex.split(command)
                except ValueError:
                    words = []
                literal = bool(words) and not any(
                    "…" in w or w[:1] in "<$|" or "$(" in w or "${" in w or _PLACEHOLDER.fullmatch(w.split("/")[0])
                    or (w.startswith("hf://") and _PLACEHOLDER.search(w)) for w in words)
                if literal:
                    literal = all(w in written or (root / w).exists() for w in _inputs(words))
                if literal:
                    written |= {words[i + 1] for i, w in enumerate(words[:-1]) if w in OUTPUT_FLAGS}
                out.append(DocCommand(str(page.relative_to(root)), start, text, command,
                                      _extra(command, words[1] if len(words) > 1 else ""), literal))
                if words and words[0] != "masklens":
                    raise AssertionError(f"{page}:{start}: not a masklens line: {text}")
    return out
