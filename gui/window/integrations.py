"""Optional pieces owned by the review/reports work: wired in when importable, skipped otherwise."""

from __future__ import annotations

import importlib
import logging
from typing import Any

from PySide6.QtGui import QAction

from masklens.core.errors import MasklensError

log = logging.getLogger(__name__)


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        log.info("optional module %s not available: %s", name, exc)
        return None


def review_panel(window: Any) -> Any:
    mod = _module("masklens.gui.review.panel")
    if mod is None:
        return None
    try:
        panel = mod.ReviewPanel()
    except Exception as exc:  # noqa: BLE001 - an optional panel must not stop the window
        log.warning("review panel unavailable: %s", exc)
        return None
    if hasattr(panel, "verdictsChanged"):  # only those samples' verdicts are read again
        panel.verdictsChanged.connect(lambda ids: refresh_verdicts(window, ids))
    elif hasattr(panel, "verdictRecorded"):
        panel.verdictRecorded.connect(lambda *_: refresh_verdicts(window))
    if hasattr(panel, "nextUnreviewedRequested"):
        panel.nextUnreviewedRequested.connect(lambda sid: _goto_sample(window, sid))
    if hasattr(panel, "confirmed"):
        panel.confirmed.connect(lambda text: window.message_bar.show_message(text, "info"))
    return panel


def _goto_sample(window: Any, sample_id: str) -> None:
    bench = window.state.benchmark
    if not sample_id or bench is None:
        window.message_bar.show_message("every sample has a verdict of this reviewer", "info")
        return
    ids = [s.id for s in bench.samples]
    if sample_id in ids:
        window.state.set_index(ids.index(sample_id))


def review_shortcuts(panel: Any) -> list[QAction]:
    try:
        return list(panel.shortcut_actions())
    except Exception:  # noqa: BLE001
        return []


def attach_review_store(window: Any) -> None:
    """Open the benchmark's review store (beside its data) for writing and show its verdicts in
    the browser. The store is opened before the one shown so far is given back: reopening a
    benchmark reuses the process' one connection to its file (never a second one)."""
    from masklens.core.review.locations import default_store_path
    from masklens.core.review.store import Role, open_store

    bench = window.state.benchmark
    if bench is None:
        return
    old = window.state.review_store
    try:
        store = open_store(default_store_path(bench.sources), Role.WRITE)
    except (MasklensError, OSError) as exc:  # shown, never a crash
        store = None
        window.message_bar.show_message(f"reviews unavailable: {exc}", "warning")
    window.state.review_store = store
    if old is not None:
        old.close()
    if window.review_panel is not None:
        window.review_panel.set_store(store)
        window.review_panel.sample_order = [s.id for s in bench.samples] if store is not None else []
    if store is not None:
        refresh_verdicts(window)


#: up to this many changed samples are read one by one; beyond, the whole store once
FEW_SAMPLES = 2000


def refresh_verdicts(window: Any, sample_ids: list[str] | None = None) -> None:
    """Show the store's verdicts in the browser: of ``sample_ids`` only (a verdict just recorded
    or undone: their rows, not the whole store), or of every sample."""
    store, bench = window.state.review_store, window.state.benchmark
    if store is None or bench is None:
        return
    from masklens.core.review.locations import benchmark_key
    from masklens.core.review.verdict_types import VERDICT_TYPES

    key = benchmark_key(bench)
    model = window.browser.model
    if sample_ids is not None and len(sample_ids) <= FEW_SAMPLES:
        verdicts = dict(model.verdicts)
        for sid in dict.fromkeys(sample_ids):
            keys = ", ".join(sorted({v.verdict for v in store.sample_current(key, sid) if v.verdict}))
            if keys:
                verdicts[sid] = keys
            else:
                verdicts.pop(sid, None)
    else:
        verdicts = {sid: ", ".join(sorted({v.verdict for v in vs if v.verdict}))
                    for sid, vs in store.sample_verdicts(key).items()}
    labels = {k: vt.label for k, vt in VERDICT_TYPES.items()}
    model.verdict_label = lambda k: labels.get(k, k)
    model.set_verdicts(verdicts)
    proxy = window.browser.proxy
    from masklens.gui.browser.sample_table import FIXED

    if reads_verdicts(proxy.filter) or proxy.sortColumn() == FIXED.index("verdict"):  # e.g. "unreviewed"
        proxy.refilter()
    window.browser._update_count()


def reads_verdicts(f: Any) -> bool:
    """Whether a filter's matches may change with the verdicts (unknown filters: yes)."""
    from masklens.gui.browser.filters import Expression, Filter

    if type(f) is Filter:
        return False
    if isinstance(f, Expression):
        return "verdict" in f.keys
    return True


def review_set_sample(window: Any) -> None:
    from masklens.core.review.locations import benchmark_key

    sample = window.state.sample
    window.review_panel.set_sample(benchmark_key(window.state.benchmark), sample.id,
                                   [p.id for p in sample.prompts], prompt_names(sample))


def prompt_names(sample: Any) -> dict[str, str]:
    """Prompt id → “text” (role): how verdicts on a prompt are named on screen."""
    return {p.id: f"“{p.text}” ({p.role.value})" for p in sample.prompts}


def _dialog_action(window: Any, module: str, func: str, text: str, shortcut: str | None) -> QAction | None:
    mod = _module(module)
    if mod is None or not hasattr(mod, func):
        return None
    act = QAction(text, window)
    if shortcut:
        act.setShortcut(shortcut)

    def run() -> None:
        try:
            getattr(mod, func)(window, window.state)
        except Exception as exc:  # noqa: BLE001 - shown, never a crash
            from masklens.gui.jobs.workers import error_message

            if not isinstance(exc, MasklensError):
                log.exception("%s failed", text)
            window.message_bar.show_message(error_message(exc), "error")  # a bug names the log

    act.triggered.connect(run)
    return act


def evaluate_action(window: Any) -> QAction | None:
    return _dialog_action(window, "masklens.gui.dialogs.evaluate_dialog", "open_evaluate_dialog",
                          "Run benchmark…", "Ctrl+E")


def report_action(window: Any) -> QAction | None:
    return _dialog_action(window, "masklens.gui.dialogs.report_dialog", "open_report_dialog",
                          "Export report…", "Ctrl+Shift+E")
