"""File › Save workspace… and opening a workspace file (``masklens gui FILE``, a double click in a
file manager): the benchmark's kind and input files, its prediction sets and its review store
(:mod:`masklens.core.files.workspace`)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from masklens.core.errors import MasklensError
from masklens.core.files.workspace import (
    SUFFIX,
    PredictionArgs,
    Workspace,
    read_workspace,
    write_workspace,
)
from masklens.gui.dialogs.open_dialog import file_actions, is_prediction_arg, kind_parser
from masklens.gui.state import AppState
from masklens.gui.window.commands import WindowCommands

log = logging.getLogger("masklens.gui")


def _flags(actions: list[argparse.Action], namespace: argparse.Namespace) -> list[str]:
    """The arguments that give ``namespace`` its values for ``actions`` (a list value: the flag
    once per value)."""
    argv: list[str] = []
    for action in actions:
        value = getattr(namespace, action.dest, None)
        if value is None or not action.option_strings:
            continue
        for v in value if isinstance(value, list) else [value]:
            argv += [action.option_strings[0], str(Path(str(v)).absolute()) if "://" not in str(v) else str(v)]
    return argv


def workspace_of(state: AppState) -> Workspace:
    """What the window has open as a workspace. A prediction set opened with the benchmark (the
    demo's, or files named with the benchmark) reads its arguments from the benchmark's."""
    if state.kind is None or state.namespace is None:
        raise MasklensError("open a benchmark first: a workspace records what the window has open")
    actions = file_actions(kind_parser(state.kind))
    inputs = _flags([a for a in actions if not is_prediction_arg(a)], state.namespace)
    with_benchmark = _flags([a for a in actions if is_prediction_arg(a)], state.namespace)
    sets = [PredictionArgs(name, state.set_argv.get(name) or with_benchmark)
            for name in state.prediction_sets if state.set_argv.get(name) or with_benchmark]
    store = str(state.review_store.path) if state.review_store is not None else None
    return Workspace(state.kind.name, inputs, sets, store)


def save_workspace(state: AppState, path: str | Path) -> Path:
    """Write the window's workspace to ``path``; returns the file written."""
    return write_workspace(path, workspace_of(state))


def save_workspace_dialog(parent: QWidget, state: AppState, commands: WindowCommands) -> Path | None:
    """File › Save workspace…: ask where, write it, say so."""
    try:
        workspace = workspace_of(state)
    except MasklensError as exc:
        commands.message_bar.show_message(str(exc), "warning")
        return None
    path, _ = QFileDialog.getSaveFileName(parent, "Save workspace", f"{workspace.kind}{SUFFIX}",
                                          f"masklens workspace (*{SUFFIX})")
    if not path:
        return None
    written = write_workspace(path, workspace)
    commands.message_bar.show_message(f"saved workspace {written}", "info")
    return written


def open_workspace(state: AppState, commands: WindowCommands, path: str | Path, *,
                   sync: bool = False) -> bool:
    """Open the workspace in ``path``: its benchmark, then its prediction sets under their names."""
    try:
        workspace = read_workspace(path)
    except MasklensError as exc:
        commands.message_bar.show_message(f"cannot open the workspace: {exc}", "error")
        return False

    def attach_sets() -> None:
        for pset in workspace.prediction_sets:
            commands.open_predictions(pset.argv, pset.name, sync=sync)
        store = state.review_store.path if state.review_store is not None else None
        if workspace.store and store is not None and Path(str(store)) != Path(workspace.store):
            commands.message_bar.show_message(
                f"the workspace names the review store {workspace.store}; the one beside the "
                f"benchmark is open: {store}", "warning")
        log.info("opened workspace %s", path)

    return commands.open_benchmark(workspace.kind, workspace.inputs, sync=sync, on_loaded=attach_sets)
