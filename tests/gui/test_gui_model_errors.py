"""A model that cannot load says, in the window, what to do there: the prompt bar's Options…
dialog instead of the CLI's --weights."""

from __future__ import annotations

from PySide6.QtCore import Qt


def test_offline_model_without_weights_names_the_options_dialog(toy_window, qtbot, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))  # an empty cache: facebook/sam3 is absent
    w = toy_window
    pb = w.prompt_bar
    pb.set_role("positive", None)
    pb.set_text("red square")
    assert pb.select_model("sam3")
    qtbot.mouseClick(pb.run, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.message_bar.level == "error" and not w.jobs.busy, timeout=20000)
    text = w.message_bar.text
    assert "'facebook/sam3' are not in the Hugging Face cache" in text, text
    assert "hf auth login" in text and "hf download facebook/sam3" in text
    assert "Options… dialog" in text and "--weights" not in text
