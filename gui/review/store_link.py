"""The open benchmark's review store in the window: opened for writing when a benchmark opens,
handed to the Review dock, and its verdicts shown in the sample list's verdict column."""

from __future__ import annotations

from typing import Any

from masklens.core.errors import MasklensError
from masklens.core.review.locations import benchmark_key, default_store_path
from masklens.core.review.store import Role, open_store
from masklens.core.review.verdict_types import VERDICT_TYPES
from masklens.core.review.verdicts import whose_verdicts
from masklens.gui.browser.filters import Expression, Filter
from masklens.gui.browser.sample_browser import SampleBrowser
from masklens.gui.browser.sample_table import FIXED
from masklens.gui.review.panel import ReviewPanel
from masklens.gui.state import AppState
from masklens.gui.window.message_bar import MessageBar

#: up to this many changed samples are read one by one; beyond, the whole store once
FEW_SAMPLES = 2000


class ReviewStoreLink:
    """Opens the benchmark's review store (beside its data) and keeps the browser's verdict
    column and the Review dock on it."""

    def __init__(self, state: AppState, browser: SampleBrowser, panel: ReviewPanel,
                 message_bar: MessageBar) -> None:
        self.state = state
        self.browser = browser
        self.panel = panel
        self.message_bar = message_bar
        browser.model.set_verdict_labels({k: vt.label for k, vt in VERDICT_TYPES.items()})
        panel.verdictsChanged.connect(self.refresh_verdicts)  # only those samples' verdicts are read again
        # another reviewer name, or another process' writes: every row's verdicts are read again
        panel.reviewerChanged.connect(lambda _: self.refresh_verdicts())
        panel.storeChanged.connect(self.refresh_verdicts)
        panel.nextUnreviewedRequested.connect(self.goto_sample)
        panel.confirmed.connect(lambda text: message_bar.show_message(text, "info"))

    def attach(self) -> None:
        """Open the benchmark's review store for writing and show its verdicts in the browser.
        The store is opened before the one shown so far is given back: reopening a benchmark
        reuses the process' one connection to its file (never a second one)."""
        bench = self.state.benchmark
        if bench is None:
            return
        old = self.state.review_store
        try:
            store = open_store(default_store_path(bench.sources), Role.WRITE)
        except (MasklensError, OSError) as exc:  # shown, never a crash
            store = None
            self.message_bar.show_message(f"reviews unavailable: {exc}", "warning")
        self.state.set_review_store(store)
        if old is not None:
            old.close()
        self.panel.set_store(store, [s.id for s in bench.samples])
        if store is not None:
            self.refresh_verdicts()

    def refresh_verdicts(self, sample_ids: list[str] | None = None) -> None:
        """Show the store's verdicts in the browser — the reviewer's own in the verdict column,
        the others' in theirs (:func:`whose_verdicts`): of ``sample_ids`` only (a verdict just
        recorded or undone: their rows, not the whole store), or of every sample."""
        store, bench = self.state.review_store, self.state.benchmark
        if store is None or bench is None:
            return
        key = benchmark_key(bench)
        model, who = self.browser.model, self.panel.who()
        if sample_ids is not None and len(sample_ids) <= FEW_SAMPLES:
            verdicts, others = dict(model.verdicts), dict(model.others)
            for sid in dict.fromkeys(sample_ids):
                mine, theirs = whose_verdicts(store.sample_current(key, sid), who)
                for column, got in ((verdicts, mine), (others, theirs)):
                    if sid in got:
                        column[sid] = got[sid]
                    else:
                        column.pop(sid, None)
        else:
            verdicts, others = whose_verdicts(store.current(key), who)
        model.set_verdicts(verdicts, others)
        proxy = self.browser.proxy
        sorted_by = proxy.sortColumn()
        if reads_verdicts(proxy.filter) or sorted_by in (FIXED.index("verdict"), FIXED.index("others")):
            proxy.refilter()  # e.g. "unreviewed"
        self.browser.update_count()

    def goto_sample(self, sample_id: str) -> None:
        """The Review dock's "next unreviewed" sample ("": there is none)."""
        bench = self.state.benchmark
        if not sample_id or bench is None:
            self.message_bar.show_message("every sample has a verdict of this reviewer", "info")
            return
        ids = [s.id for s in bench.samples]
        if sample_id in ids:
            self.state.set_index(ids.index(sample_id))

    def show_sample(self) -> None:
        """The Review dock on the current sample."""
        sample, bench = self.state.sample, self.state.benchmark
        if sample is None or bench is None:
            return
        self.panel.set_sample(benchmark_key(bench), sample.id, [p.id for p in sample.prompts], prompt_names(sample))


def reads_verdicts(f: Any) -> bool:
    """Whether a filter's matches may change with the verdicts (unknown filters: yes)."""
    if type(f) is Filter:
        return False
    if isinstance(f, Expression):
        return "verdict" in f.keys or "others" in f.keys
    return True


def prompt_names(sample: Any) -> dict[str, str]:
    """Prompt id → “text” (role): how verdicts on a prompt are named on screen."""
    return {p.id: f"“{p.text}” ({p.role.value})" for p in sample.prompts}
