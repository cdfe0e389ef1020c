"""Drawing the window (an object the window owns, :class:`Renderer`): the visible
view's panels for the current sample with their captions, the readout tree, the status bar's
sample line and the missing-image warning; then the neighbouring samples' images are decoded
off the GUI thread (:mod:`masklens.gui.jobs.prefetch`) for the next switch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QTabWidget

from masklens.gui.canvas.image_cache import ImageStore
from masklens.gui.canvas.prefetch_panels import panel_prefetch
from masklens.gui.canvas.sample_view import (
    LayerToggles,
    RenderContext,
    SampleViewWidget,
    prepare_image,
)
from masklens.gui.jobs.prefetch import ImagePrefetcher
from masklens.gui.prompts.live_list import LiveList
from masklens.gui.state import AppState
from masklens.gui.views import view_for
from masklens.gui.window.message_bar import MessageBar
from masklens.gui.window.readout_panel import ReadoutPanel
from masklens.gui.window.status import StatusBar

if TYPE_CHECKING:
    from masklens.gui.browser.sample_browser import SampleBrowser
    from masklens.gui.compare.sets import SetComparison
    from masklens.gui.gallery.tab import GalleryTab

#: the neighbours' images are queued this long after a sample is drawn: at once (decoding them
#: releases the GIL and overlaps the paint; a user stepping on at ~30 presses a second otherwise
#: met each image still being decoded); their overlays wait until the user pauses (prefetch.QUIET_MS)
PREFETCH_DELAY_MS = 0


class Renderer:
    """``render()`` redraws what the window shows of the current sample. ``owner`` (the window)
    bounds the life of the prefetch timer."""

    def __init__(self, owner: QObject, *, state: AppState, store: ImageStore, toggles: LayerToggles,
                 tabs: QTabWidget, sample_view: SampleViewWidget, compare_view: SampleViewWidget,
                 live_list: LiveList, readout_panel: ReadoutPanel, browser: SampleBrowser, status: StatusBar,
                 message_bar: MessageBar, set_comparison: SetComparison, gallery: GalleryTab) -> None:
        self.owner = owner
        self.state = state
        self.store = store
        self.toggles = toggles
        self.tabs = tabs
        self.sample_view = sample_view
        self.compare_view = compare_view
        self.live_list = live_list
        self.readout_panel = readout_panel
        self.browser = browser
        self.status = status
        self.message_bar = message_bar
        self.set_comparison = set_comparison
        self.gallery = gallery
        #: decodes the neighbouring samples' images into the window's image store
        self.prefetcher = ImagePrefetcher(store, on_decoded=prepare_image)
        self._prefetched_around: tuple[int, int] | None = None

    def current_view(self) -> SampleViewWidget:
        """The canvas shown: the Sample tab's, Compare typed prompts' or Compare sets'."""
        if self.set_comparison.shown():
            return self.set_comparison.tab.view
        return self.compare_view if self.tabs.currentIndex() == 1 else self.sample_view

    def render(self, *, in_turns: bool = False, cold_later: bool = False) -> None:
        """Redraw the visible view and the readout panel for the current sample (``in_turns``: a
        view holding many instances is drawn over the next event-loop turns; ``cold_later``, a
        sample switch: masks still to decode are drawn in the next turn; see ``show_panels``)."""
        sample, kind = self.state.sample, self.state.kind
        if sample is None or kind is None:
            self.sample_view.show_panels([], None, 1)
            return
        t = self.state.score_threshold
        preds = self.state.predictions()
        live = {f"live:{r.id}": r for r in self.state.live_for_sample()}

        def prediction(pid: str | None) -> Any:
            if pid is None:
                return None
            if pid in live:
                return live[pid].prediction
            return preds.get(pid) if preds else None

        view = view_for(kind.name)
        ctx = RenderContext(self.store, sample, prediction, t, self.toggles,
                            self._caption(live, prediction, t, view), score_labels=view.score_labels)
        if self.set_comparison.shown():
            self.set_comparison.render(ctx, view)
        elif self.tabs.currentWidget() is self.gallery:
            pass  # the Sample tab is drawn when it is shown again (tabs.currentChanged)
        elif self.tabs.currentIndex() == 1:
            specs = self.live_list.panel_specs(sample)
            self.compare_view.show_panels(specs, ctx, 2 if len(specs) == 4 else min(3, max(1, len(specs))),
                                          in_turns=in_turns)
        else:
            specs = view.panels(sample)
            self.sample_view.show_panels(specs, ctx, view.grid_columns(len(specs)), in_turns=in_turns,
                                         cold_later=cold_later)
        self._show_readout()
        missing = [w for r in sample.images.values() if (w := self.store.why_missing(r, sample.id))]
        note = f"{missing[0]} (shown as a checkerboard; scoring needs no pixels)" if missing else ""
        if note and note != self.message_bar.text:
            self.message_bar.show_message(note, "warning")
        self.show_status()
        gallery = self.tabs.currentWidget() is self.gallery  # draws no full image
        if not gallery and self._prefetched_around != (id(sample), self.state.index):
            self._prefetched_around = (id(sample), self.state.index)
            QTimer.singleShot(PREFETCH_DELAY_MS, self.owner, self._prefetch_neighbours)  # dropped with the window

    def neighbours(self) -> list[int]:
        """The samples after and before the current one in the list's order (the filter and
        sort shown; the benchmark's order when the current sample is not in the list)."""
        st = self.state
        if st.benchmark is None or st.sample is None:
            return []
        n, i = len(st.benchmark.samples), st.index
        proxy = self.browser.proxy
        pos = proxy.mapFromSource(self.browser.model.index(i, 0)).row()
        if pos < 0:
            return [j for j in (i + 1, i - 1) if 0 <= j < n]
        rows = proxy.visible_rows()
        return [int(rows[p]) for p in (pos + 1, pos - 1) if 0 <= p < len(rows)]

    def _prefetch_neighbours(self) -> None:
        """Queue the neighbours' images; on the Sample tab also what drawing their panels needs
        (masks, overlays: :mod:`~masklens.gui.canvas.prefetch_panels`), as they would be drawn now."""
        st = self.state
        if st.benchmark is None or st.kind is None:
            return
        samples = st.benchmark.samples
        neighbours = [samples[j] for j in self.neighbours() if j < len(samples)]
        items: list = [ref for sample in neighbours for ref in sample.images.values()]  # images first
        if self.tabs.currentWidget() is self.sample_view and not self.set_comparison.shown():
            preds = st.predictions()
            view = view_for(st.kind.name)
            for sample in neighbours:
                items += panel_prefetch(self.store, view.panels(sample), sample,
                                        lambda pid: preds.get(pid) if preds and pid is not None else None,
                                        st.score_threshold, self.toggles)
        self.prefetcher.request(items)

    def show_status(self) -> None:
        """The status bar's sample line (which sample, its group, whether the filter keeps it)."""
        sample = self.state.sample
        if sample is None or self.state.benchmark is None:
            return
        n = len(self.state.benchmark.samples)
        text = (f"sample {self.state.index + 1}/{n}: {sample.id}" + (f" · {sample.group}" if sample.group else "")
                + (" · outside the filter" if self.browser.current_outside() else ""))
        if self.status.sample.text() != text:  # a new text re-lays out the status bar and window
            self.status.set_sample(text)

    def _caption(self, live: dict, prediction, t: float, view=None):
        from masklens.core.scoring.readout import generic_readout

        sample, readout = self.state.sample, self.state.readout()

        def caption(spec) -> str:
            pred = prediction(spec.prompt_id)
            if spec.prompt_id is None or sample is None:
                return ""
            own_prompt = next((p for p in sample.prompts if p.id == spec.prompt_id), None)
            if own_prompt is None and spec.prompt_id not in live:  # a layer of another sample
                return ""
            if own_prompt is not None and view is not None:  # the benchmark's own words first
                own = view.safe_caption(sample, own_prompt, readout, self.state.params)
                if own:
                    return own
            if pred is None:
                return "no prediction"
            r = live.get(spec.prompt_id)
            if r is not None and r.generic.get("score_threshold") == t:
                g = r.generic  # already derived at this t (state._rescore_live): no mask touched again
            else:
                g = generic_readout(sample, r.prompt if r is not None else sample.prompt(spec.prompt_id), pred, t)
            iou = "–" if g["iou"] is None else f"{g['iou']:.3f}"
            return (f"IoU(∪ s≥{t:.2f}) {iou} · kept {g['n_accepted']}/{g['n_instances']}"
                    f" · max s {g['max_score']:.2f}")

        return caption

    def _show_readout(self) -> None:
        sections: list[tuple[str, Any]] = []
        rec, kind = self.state.readout(), self.state.kind
        if rec is not None and kind is not None:
            sections.append((f"{kind.title or kind.name} · {self.state.active}", rec))
        elif self.state.sample is not None:
            sections.append(("benchmark readout", "open predictions or run a prompt"))
        for r in self.state.live_for_sample():
            sections.append((f"typed #{r.id} {r.label}", {
                "generic": r.generic,
                "benchmark (prompt replaced)": r.benchmark if r.benchmark is not None
                else "no benchmark prompt of this role",
            }))
        self.readout_panel.show_readouts(sections)
