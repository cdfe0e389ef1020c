"""The desktop files as the desktop's own tools read them: ``desktop-file-validate`` prints nothing
for the bundled and the installed entry, ``appstreamcli validate`` passes the metainfo, and a
double click on a workspace file opens it in the window (``xdg-open`` under Xvfb, with the entry
installed into a scratch XDG_DATA_HOME). The tools come from Debian packages (desktop-file-utils,
appstream, xdg-utils, xvfb, shared-mime-info, libfile-mimeinfo-perl) that .ci/run installs; a
machine without them skips, saying which."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from masklens.core.cli import main
from masklens.core.kinds.demo import demo_files
from masklens.core.runtime import desktop

ROOT = Path(__file__).resolve().parents[2]
DESKTOP = ROOT / "resources" / "desktop"


def _tool(name: str, package: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (Debian: apt-get install {package}; .ci/run installs it)")
    return found


def test_desktop_file_validate_prints_nothing(tmp_path, monkeypatch):
    validate = _tool("desktop-file-validate", "desktop-file-utils")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    assert main(["install-desktop"]) == 0
    installed = tmp_path / "share" / "applications" / "masklens.desktop"
    for entry in (DESKTOP / "masklens.desktop", installed):
        run = subprocess.run([validate, str(entry)], capture_output=True, text=True)
        assert (run.returncode, run.stdout, run.stderr) == (0, "", ""), entry


def test_the_entry_has_one_main_category_and_opens_workspace_files():
    lines = dict(ln.split("=", 1) for ln in (DESKTOP / "masklens.desktop").read_text().splitlines() if "=" in ln)
    main_categories = {"AudioVideo", "Audio", "Video", "Development", "Education", "Game", "Graphics",
                       "Network", "Office", "Science", "Settings", "System", "Utility"}
    assert [c for c in lines["Categories"].split(";") if c in main_categories] == ["Science"]
    assert lines["MimeType"] == "application/x-masklens-workspace;"
    assert lines["Exec"].endswith(" %f")


def test_appstreamcli_validates_the_metainfo():
    appstreamcli = _tool("appstreamcli", "appstream")
    run = subprocess.run([appstreamcli, "validate", "--no-net", str(DESKTOP / desktop.METAINFO)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def _wait_for(condition, what: str, timeout_s: float = 60.0) -> None:
    """Poll ``condition`` until it holds (the window is another process: no Qt event to wait on)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.2)


@pytest.mark.slow
def test_double_click_on_a_workspace_file_opens_it(tmp_path, monkeypatch):
    for tool, package in (("xdg-open", "xdg-utils"), ("xvfb-run", "xvfb"),
                          ("update-mime-database", "shared-mime-info"),
                          ("update-desktop-database", "desktop-file-utils"),
                          ("mimetype", "libfile-mimeinfo-perl")):
        _tool(tool, package)
    share, logs = tmp_path / "share", tmp_path / "logs"
    monkeypatch.setenv("XDG_DATA_HOME", str(share))
    assert main(["install-desktop"]) == 0  # the entry, the MIME type, their caches refreshed
    files = demo_files("cafe")
    workspace = tmp_path / "my benchmark.masklens"
    workspace.write_text(json.dumps({
        "masklens_workspace": 1, "kind": "cafe", "inputs": ["--ann", str(files["ann"])],
        "prediction_sets": [{"name": "demo", "argv": ["--pred", str(files["pred"])]}], "store": None}))
    env = {k: v for k, v in os.environ.items()
           if k not in ("QT_QPA_PLATFORM", "XDG_CURRENT_DESKTOP", "DESKTOP_SESSION", "DISPLAY")}
    env.update(XDG_DATA_HOME=str(share), XDG_DATA_DIRS=f"{share}:/usr/share", HOME=str(tmp_path),
               MASKLENS_LOG_DIR=str(logs))
    opener = subprocess.Popen(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", "xdg-open", str(workspace)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              start_new_session=True)
    log = logs / "masklens.log"
    try:
        _wait_for(lambda: log.exists() and f"opened workspace {workspace}" in log.read_text(),
                  "the window to open the workspace")
        text = log.read_text()
        assert f"gui {workspace}" in text  # started by the entry's Exec … %f, with the file
    finally:
        os.killpg(opener.pid, signal.SIGTERM)
        opener.communicate(timeout=30)
