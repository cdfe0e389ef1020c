"""GUI test fixtures: a fresh settings dir, the toy benchmark on disk, and the real window."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

import toykind  # noqa: E402


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item):
    """Before pytest-qt closes the test's windows: an edit a test left open is dropped, as
    Discard would drop it (closing would otherwise ask Accept / Discard / Cancel, modal)."""
    import shiboken6
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is not None:
        from masklens.gui.window.main_window import MainWindow

        for w in QApplication.topLevelWidgets():
            if isinstance(w, MainWindow) and shiboken6.isValid(w):
                w.correction.end()
    return (yield)


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MASKLENS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("MASKLENS_CACHE_DIR", str(tmp_path / "cache"))  # prediction cache
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # review stores of the demo
    toykind.install(monkeypatch)  # the toy kind and segmenters, for this test only
    # the window's torch models run in this process here: these tests reach into the loaded
    # models (slow blocks, spies); tests/gui/test_model_process.py runs them in their own process
    monkeypatch.setenv("MASKLENS_MODEL_PROCESS", "in-process")


@pytest.fixture
def computed(monkeypatch):
    """``computed(lru)``: how many values that ByteLRU had to compute so far (its ``make`` calls
    that returned, spied on the real ByteLRU.get)."""
    import threading
    from collections import Counter

    from masklens.gui.canvas.image_cache import ByteLRU

    counts: Counter[int] = Counter()
    lock = threading.Lock()
    get = ByteLRU.get

    def spied(self, key, make):
        def counted():
            value = make()
            with lock:
                counts[id(self)] += 1
            return value

        return get(self, key, counted)

    monkeypatch.setattr(ByteLRU, "get", spied)
    return lambda lru: counts[id(lru)]


@pytest.fixture
def toy(tmp_path):
    return toykind.write_toy(tmp_path / "toy")


@pytest.fixture
def window(qtbot):
    from masklens.gui.window.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    yield w
    w.jobs.cancel_all()
    w.rescoring.runner.cancel_all()
    qtbot.waitUntil(lambda: not w.jobs.busy and not w.rescoring.runner.busy, timeout=10000)
    w.model_host.stop()


@pytest.fixture
def toy_window(window, toy, qtbot):
    """The window with the toy benchmark and its predictions opened (through the worker pool)."""
    assert window.commands.open_benchmark("toy", ["--ann", str(toy["ann"]), "--pred", str(toy["pred"])])
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=10000)
    return window


@pytest.fixture
def no_internal_errors(monkeypatch, request):
    """Fail the test on an exception escaping a slot (sys.excepthook), on a Qt critical/fatal
    message, and on any "internal error" or traceback a window showed in its message bar.

    The windows looked at are the test's own: those among its fixtures and those it made while
    this fixture was active (not every top-level widget of the process, which may include one
    Qt is destroying)."""
    import sys
    import weakref

    import shiboken6
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    from masklens.gui.window.main_window import MainWindow

    seen: list[str] = []
    made: list[weakref.ref[MainWindow]] = []
    monkeypatch.setattr(sys, "excepthook", lambda t, v, tb: seen.append(f"{t.__name__}: {v}"))
    init = MainWindow.__init__

    def remembered(self, *args, **kwargs):  # noqa: ANN001, ANN202 - the real __init__, spied
        made.append(weakref.ref(self))
        init(self, *args, **kwargs)

    monkeypatch.setattr(MainWindow, "__init__", remembered)

    def handler(mode, _context, message):  # noqa: ANN001 - Qt callback
        if mode in (QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg) or "internal error" in message:
            seen.append(message)

    previous = qInstallMessageHandler(handler)
    yield seen
    qInstallMessageHandler(previous)
    windows = [v for v in request.node.funcargs.values() if isinstance(v, MainWindow)]
    windows += [w for ref in made if (w := ref()) is not None and w not in windows]
    for w in windows:
        if shiboken6.isValid(w):
            seen += [t for _, t in w.message_bar.history if "internal error" in t or "Traceback" in t]
    assert not seen, seen


#: a dark palette (as a desktop's dark theme gives Qt): colour role → colour
DARK = {"Window": "#2b2b2b", "WindowText": "#e6e6e6", "Base": "#1e1e1e", "AlternateBase": "#262626",
        "Text": "#e6e6e6", "Button": "#353535", "ButtonText": "#e6e6e6", "ToolTipBase": "#333333",
        "ToolTipText": "#e6e6e6"}


@pytest.fixture
def dark(qapp):
    """The application under Fusion and :data:`DARK` for the test (the palette is yielded)."""
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QStyleFactory

    style, palette = qapp.style().name(), qapp.palette()
    qapp.setStyle(QStyleFactory.create("Fusion"))
    pal = QPalette()
    for role, colour in DARK.items():
        pal.setColor(getattr(QPalette.ColorRole, role), QColor(colour))
    qapp.setPalette(pal)
    yield pal
    qapp.setPalette(palette)
    qapp.setStyle(QStyleFactory.create(style))
