"""GUI test fixtures: a fresh settings dir, the toy benchmark on disk, and the real window."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

import toykind  # noqa: E402


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MASKLENS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("MASKLENS_CACHE_DIR", str(tmp_path / "cache"))  # prediction cache
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # review stores of the demo
    toykind.install(monkeypatch)  # the toy kind and segmenters, for this test only


@pytest.fixture
def toy(tmp_path):
    return toykind.write_toy(tmp_path / "toy")


@pytest.fixture
def window(qtbot):
    from masklens.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    yield w
    w.jobs.cancel_all()
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=10000)


@pytest.fixture
def toy_window(window, toy, qtbot):
    """The window with the toy benchmark and its predictions opened (through the worker pool)."""
    assert window.open_benchmark("toy", ["--ann", str(toy["ann"]), "--pred", str(toy["pred"])])
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=10000)
    return window
