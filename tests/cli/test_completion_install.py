"""`masklens completion SHELL --install` on a fresh home: the folders bash-completion (or zsh, or
tcsh) reads do not exist yet, so it creates them, writes the script there and says where
(``masklens completion bash > ~/.local/share/bash-completion/completions/masklens`` fails in the
shell, before masklens runs)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from masklens.core.cli import main


@pytest.fixture
def fresh_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    return home


def test_bash_install_creates_the_folder_and_the_script(fresh_home, capsys):
    target = fresh_home / ".local" / "share" / "bash-completion" / "completions" / "masklens"
    assert not target.parent.exists()
    assert main(["completion", "bash", "--install"]) == 0
    assert capsys.readouterr().err.startswith(f"wrote {target}; ")
    assert main(["completion", "bash"]) == 0
    assert target.read_text() == capsys.readouterr().out  # the script printed without --install
    if shutil.which("bash"):
        defined = subprocess.run(["bash", "-c", f"source '{target}' && type -t _shtab_masklens"],
                                 capture_output=True, text=True)
        assert defined.stdout.strip() == "function"


@pytest.mark.parametrize(("shell", "where", "said"), [
    ("zsh", ".local/share/zsh/site-functions/_masklens", "fpath=("),
    ("tcsh", ".local/share/masklens/completion.tcsh", "source "),
])
def test_zsh_and_tcsh_install_and_say_what_to_add(fresh_home, capsys, shell, where, said):
    assert main(["completion", shell, "--install"]) == 0
    assert (fresh_home / where).is_file()
    assert said in capsys.readouterr().err
