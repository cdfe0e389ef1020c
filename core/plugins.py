"""Plug-ins: what masklens finds through entry points, its own built-ins included.

A package extends masklens by declaring entry points in one of the groups below (in its
``pyproject.toml``, ``[project.entry-points."masklens.kinds"]`` and so on); masklens itself
declares its built-ins the same way. Nothing is imported until it is asked for by name, so the
command line starts fast whatever is installed.

========================  =========================================================  ==========
group                     an entry point names                                        read by
========================  =========================================================  ==========
``masklens.kinds``        a :class:`~masklens.core.scoring.contract.BenchmarkKind`    scorer, CLI
``masklens.models``       a backend module (``INFO`` and ``create(**options)``)       models
``masklens.report_layouts`` a :class:`~masklens.core.reports.layout.KindLayout`       reports
``masklens.verdict_types`` a :class:`~masklens.core.review.verdict_types.VerdictType`  review
``masklens.gui.cards``    a readout card class for a kind                             window
``masklens.gui.views``    a sample view class for a kind                              window
========================  =========================================================  ==========

The entry point's name is the key (a kind's name, a backend's name, a verdict's key). Objects
added at run time with :meth:`Plugins.add` (a notebook, a test) sit beside the installed ones.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar

T = TypeVar("T")

KINDS = "masklens.kinds"
MODELS = "masklens.models"
REPORT_LAYOUTS = "masklens.report_layouts"
VERDICT_TYPES = "masklens.verdict_types"
CARDS = "masklens.gui.cards"
VIEWS = "masklens.gui.views"


class Plugins(Generic[T]):
    """The objects of one entry-point group, loaded on first use and kept (thread-safe).

    ``check`` validates a loaded object (e.g. that a kind is a BenchmarkKind); it returns the
    object to keep or raises. A name added with :meth:`add` shadows an installed one."""

    def __init__(self, group: str, what: str, check: Callable[[str, object], T]) -> None:
        """``what`` names one object of the group in messages ("benchmark kind")."""
        self.group = group
        self.what = what
        self._check = check
        self._lock = threading.RLock()
        self._installed: dict[str, EntryPoint] | None = None
        self._added: dict[str, T | str] = {}
        self._loaded: dict[str, T] = {}
        self._broken: dict[str, str] = {}

    def _entry_points(self) -> dict[str, EntryPoint]:
        with self._lock:
            if self._installed is None:
                found: dict[str, EntryPoint] = {}
                for ep in entry_points(group=self.group):
                    found.setdefault(ep.name, ep)  # the first distribution on sys.path wins
                self._installed = found
            return self._installed

    def names(self) -> list[str]:
        """Every name, installed first (in the order the packages declare them), then added."""
        with self._lock:
            return list(dict.fromkeys([*self._entry_points(), *self._added]))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def source(self, name: str) -> str | None:
        """Where ``name`` comes from: ``module:attribute`` (or ``module``) of its entry point or of
        a lazily added one; ``None`` for an object added as it is, or an unknown name."""
        with self._lock:
            added = self._added.get(name)
            if isinstance(added, str):
                return added
            if name in self._added:
                return None
            ep = self._entry_points().get(name)
            return ep.value if ep is not None else None

    def is_installed(self, name: str) -> bool:
        """Whether ``name`` comes from an installed entry point and is not shadowed by one added in
        this process (so another process finds the same object by its name alone)."""
        with self._lock:
            return name not in self._added and name in self._entry_points()

    def module(self, name: str) -> str | None:
        """The module ``name`` is defined in (of its :meth:`source`), without importing it."""
        src = self.source(name)
        return src.split(":", 1)[0].strip() if src else None

    def get(self, name: str) -> T:
        """The object registered as ``name`` (imported on first use). ``KeyError`` for an unknown
        name; whatever the import raises for a broken plug-in."""
        with self._lock:
            if name in self._loaded:
                return self._loaded[name]
            if name in self._added:
                target = self._added[name]
                obj: object = _load(target) if isinstance(target, str) else target
            else:
                ep = self._entry_points().get(name)
                if ep is None:
                    raise KeyError(name)
                obj = ep.load()
            value = self._check(name, obj)
            self._loaded[name] = value
            return value

    def add(self, name: str, obj: T | str) -> None:
        """Register ``obj`` (or ``"module:attribute"`` / ``"module"``, imported on first use) as
        ``name`` in this process, beside the installed plug-ins."""
        with self._lock:
            self._added[name] = obj
            self._loaded.pop(name, None)
            self._broken.pop(name, None)

    def remove(self, name: str) -> None:
        """Forget a name added with :meth:`add` (installed plug-ins stay)."""
        with self._lock:
            self._added.pop(name, None)
            self._loaded.pop(name, None)
            self._broken.pop(name, None)

    def copy(self) -> Plugins[T]:
        """A registry of the same group holding what this one holds; what is added to either
        afterwards stays in it (a test swaps in a copy and adds its own plug-ins there)."""
        with self._lock:
            other: Plugins[T] = Plugins(self.group, self.what, self._check)
            other._installed = self._installed
            other._added = dict(self._added)
            other._loaded = dict(self._loaded)
            other._broken = dict(self._broken)
            return other

    @contextlib.contextmanager
    def temporarily(self, name: str, obj: T | str) -> Iterator[None]:
        """:meth:`add` for the ``with`` block only; what ``name`` was before is restored after."""
        with self._lock:
            had, before = name in self._added, self._added.get(name)
            loaded = self._loaded.get(name)
        self.add(name, obj)
        try:
            yield
        finally:
            with self._lock:
                self.remove(name)
                if had:
                    self._added[name] = before  # type: ignore[assignment]
                if loaded is not None:
                    self._loaded[name] = loaded

    def available(self) -> dict[str, T]:
        """Every object that loads. A plug-in that fails to import is left out with one warning
        on stderr (once per process), so it cannot take the others down."""
        out: dict[str, T] = {}
        for name in self.names():
            try:
                out[name] = self.get(name)
            except Exception as exc:  # noqa: BLE001 - any failure of a third-party module
                with self._lock:
                    first = name not in self._broken
                    self._broken[name] = f"{type(exc).__name__}: {exc}"
                if first:
                    print(f"masklens: warning: {self.what} '{name}' unavailable "
                          f"({self._broken[name]})", file=sys.stderr)
        return out


def _load(target: str) -> object:
    """``module:attribute.path`` or ``module`` imported, as an entry point's value is."""
    module, _, attr = target.partition(":")
    obj: object = importlib.import_module(module.strip())
    for part in filter(None, attr.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def instance_of(cls: type[T]) -> Callable[[str, object], T]:
    """A ``check`` for :class:`Plugins` that accepts instances of ``cls`` only."""

    def check(name: str, obj: object) -> T:
        if not isinstance(obj, cls):
            raise TypeError(f"plug-in '{name}' is a {type(obj).__name__}, not a {cls.__name__}")
        return obj

    return check


def subclass_of(cls: type[T]) -> Callable[[str, object], type[T]]:
    """A ``check`` for :class:`Plugins` that accepts subclasses of ``cls`` only."""

    def check(name: str, obj: object) -> type[T]:
        if not (isinstance(obj, type) and issubclass(obj, cls)):
            raise TypeError(f"plug-in '{name}' is not a subclass of {cls.__name__}")
        return obj

    return check
