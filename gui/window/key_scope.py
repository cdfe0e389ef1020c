"""One-key shortcuts (verdicts M/W/A/I/K, N, layer toggles G/R/E/O/S, F, 1, drawing tools) act
only while the canvas or the sample list has the keyboard focus.

A shortcut fires only if the focus widget (or one of its parents) does not accept the
``ShortcutOverride`` event Qt sends first. :class:`SingleKeyScope` filters that event on the
window and its docks: a key without Ctrl/Alt/Meta that types a character is claimed for the
focus widget unless the focus is inside one of the allowed areas — so a letter typed into the
prompt bar, a combo box, a button or the Note field is never a verdict or a layer toggle. Keys
with modifiers (Ctrl+Z, Ctrl+O, Alt+Right), PgUp/PgDown, F3 and Esc are not affected.

The allowed areas also show a focus ring (:data:`FOCUS_STYLE`), so the user sees where the
keys go.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, SignalInstance
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QDockWidget, QWidget

_MODIFIERS = (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
              | Qt.KeyboardModifier.MetaModifier)

#: a visible focus indicator for the areas where one-key shortcuts act
FOCUS_STYLE = ("{cls} {{ border: 2px solid transparent; }}"
               " {cls}:focus {{ border: 2px solid #0072B2; }}")


def is_single_key(event: QKeyEvent) -> bool:
    """A key that types a visible character and has no Ctrl/Alt/Meta modifier."""
    text = event.text()
    return bool(text) and text.isprintable() and not (event.modifiers() & _MODIFIERS)


def inside(widget: QWidget | None, areas: list[QWidget]) -> bool:
    return widget is not None and any(a is widget or a.isAncestorOf(widget) for a in areas)


class SingleKeyScope(QObject):
    """Claims ShortcutOverride for one-key shortcuts unless the focus is in ``areas()``."""

    def __init__(self, areas: Callable[[], list[QWidget]], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.areas = areas

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if (event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent)
                and is_single_key(event)
                and not inside(QApplication.focusWidget(), self.areas())):
            event.accept()  # the key goes to the focus widget as a key press, not a shortcut
            return True
        return False


def install(window: QWidget, areas: Callable[[], list[QWidget]],
            benchmark_changed: SignalInstance | None = None) -> SingleKeyScope:
    """Scope ``window``'s one-key shortcuts to ``areas()``. When a benchmark opens
    (``benchmark_changed``, e.g. the state's ``benchmarkChanged``) and the focus is outside the
    areas, the last area that can take it (the sample list) gets it, so the keys work without a
    first click."""
    scope = SingleKeyScope(areas, window)
    window.installEventFilter(scope)
    for dock in window.findChildren(QDockWidget):  # a floating dock is a window of its own
        dock.installEventFilter(scope)
    if benchmark_changed is not None:
        benchmark_changed.connect(lambda: focus_areas(areas()))
    return scope


def focus_areas(areas: list[QWidget]) -> None:
    """Give the focus to the last of ``areas`` that can take it, unless it is in one already."""
    if inside(QApplication.focusWidget(), areas):
        return
    for area in reversed(areas):  # the sample list first: it is always there
        if area.isVisible() and area.focusPolicy() != Qt.FocusPolicy.NoFocus:
            area.setFocus(Qt.FocusReason.OtherFocusReason)
            return


def show_focus(view: QWidget, cls: str) -> None:
    """A focus ring on ``view`` (type selector ``cls``, e.g. "QTableView")."""
    view.setStyleSheet(FOCUS_STYLE.format(cls=cls))
