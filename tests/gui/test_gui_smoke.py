def test_open_toy(toy_window, qtbot):
    w = toy_window
    assert w.state.benchmark is not None and len(w.state.benchmark.samples) == 6
    assert w.browser.model.rowCount() == 6
    assert len(w.sample_view.panels) == 5
    w.grab().save("/tmp/gui/toy.png")
