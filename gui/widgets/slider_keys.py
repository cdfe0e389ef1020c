"""Keyboard steps for superqt's float sliders: its ``triggerAction`` is a no-op (superqt 0.9),
so arrows, Page Up/Down, Home and End did nothing, and Page Up/Down stepped the *sample* through
the window's shortcut instead. :class:`SliderKeys` moves the slider as a QSlider would and claims
those keys while the slider has the focus."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QSlider

_SINGLE = {Qt.Key.Key_Right: 1, Qt.Key.Key_Up: 1, Qt.Key.Key_Left: -1, Qt.Key.Key_Down: -1}
_PAGE = {Qt.Key.Key_PageUp: 1, Qt.Key.Key_PageDown: -1}
_ENDS = (Qt.Key.Key_Home, Qt.Key.Key_End)


def _handled(key: int) -> bool:
    return key in _SINGLE or key in _PAGE or key in _ENDS


class SliderKeys(QObject):
    """An event filter for one float slider (``QLabeledDoubleSlider``'s inner slider)."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if not isinstance(obj, QSlider) or event.type() not in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride):
            return False
        assert isinstance(event, QKeyEvent)
        key = Qt.Key(event.key())
        if not _handled(key) or event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            return False
        event.accept()
        if event.type() == QEvent.Type.ShortcutOverride:
            return True  # the key is the slider's, not the window's PgUp/PgDown shortcut
        if key in _SINGLE:
            value = obj.value() + _SINGLE[key] * obj.singleStep()
        elif key in _PAGE:
            value = obj.value() + _PAGE[key] * obj.pageStep()
        else:
            value = obj.minimum() if key == Qt.Key.Key_Home else obj.maximum()
        obj.setValue(min(obj.maximum(), max(obj.minimum(), value)))
        return True


def install(slider: QSlider) -> SliderKeys:
    keys = SliderKeys(slider)
    slider.installEventFilter(keys)
    return keys
