"""masklens.gui: the PySide6 inspection window. The only package that imports Qt."""

from __future__ import annotations

import sys


def _guard_none_refcount() -> bool:
    """Work around a PySide6 bug: on Python < 3.12 some builds (seen with 6.12.0) drop one
    reference to ``None`` on every call of a void Qt method (and to ``True``/``False`` on some
    bool paths), as if they were immortal (they are from 3.12 on). After a few thousand calls
    CPython aborts with "none_dealloc"/"bool_dealloc". When the bug is detected, the reference
    counts of the objects 3.12 makes immortal are raised out of reach — what 3.12 does by
    design. Returns True when the guard was applied."""
    if sys.version_info >= (3, 12):
        return False
    from PySide6.QtCore import QObject

    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(16):
        probe.setObjectName("probe")  # a void method
    if sys.getrefcount(None) >= before - 8:
        return False
    import ctypes

    # everything 3.12 makes immortal and a binding may hand back without a new reference
    for obj in (None, True, False, Ellipsis, NotImplemented, (), "", *range(-5, 257)):
        refcnt = ctypes.c_ssize_t.from_address(id(obj))  # ob_refcnt, the first field of PyObject
        if refcnt.value < 1 << 40:
            refcnt.value += 1 << 60
    return True


NONE_GUARD = _guard_none_refcount()
