"""The installed Qt binding must not leak references to None/False (PySide6 6.12.0 on
Python 3.11 does, and the interpreter aborts after a few thousand calls; pyproject pins < 6.12)."""

import sys

import pytest


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None and bools are immortal from 3.12 on")
def test_void_and_bool_calls_keep_refcounts(qapp):
    from PySide6.QtWidgets import QLabel

    label = QLabel()
    none_before = sys.getrefcount(None)
    for _ in range(500):
        label.setText("x")
    false_before = sys.getrefcount(False)
    for _ in range(500):
        label.isVisible()
    assert sys.getrefcount(None) - none_before > -100
    assert sys.getrefcount(False) - false_before > -100
