"""The Gallery tab: the grid, a line saying what is shown and selected, the colour legend, and
one verdict for every selected sample (batch review through the Review dock's store: one row
per sample, one Ctrl+Z takes the batch back)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QGridLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from masklens.gui.gallery.grid import THUMB_H, THUMB_W, GalleryGrid
from masklens.gui.gallery.thumbnails import (
    FN,
    FP,
    TP,
    ThumbCache,
    ThumbLoader,
    ThumbSpec,
    make_thumbnail,
)
from masklens.gui.window.context import WindowPart

#: verdict key → (glyph, colour) on a tile; other verdict types show their label's first letter
VERDICT_GLYPHS = {
    "model_wrong": ("✗", "#D55E00"),
    "gt_wrong": ("G", "#CC79A7"),
    "prompt_ambiguous": ("?", "#E69F00"),
    "edit_invalid": ("⊘", "#0072B2"),
    "fine": ("✓", "#009E73"),
}


def thumb_spec(kind: str | None, sample: Any) -> ThumbSpec:
    """The sample's first panel in its kind's view (what the Sample tab shows first)."""
    from masklens.gui.views import view_for

    panels = view_for(kind).panels(sample)
    if not panels:
        return ThumbSpec(sample, next(iter(sample.images), None), None, next(iter(sample.gts), None))
    first = panels[0]
    return ThumbSpec(sample, first.image, first.prompt_id, first.gts[0] if first.gts else None)


def draw_tile(kind: str | None, sample: Any, predictions: Any, t: float) -> QImage:
    """One thumbnail (on the loader's thread)."""
    spec = thumb_spec(kind, sample)
    pred = predictions.get(spec.prompt_id) if predictions is not None and spec.prompt_id else None
    return make_thumbnail(spec, pred, t, THUMB_W, THUMB_H)


def _failed_tile() -> QImage:
    img = QImage(THUMB_W, THUMB_H, QImage.Format.Format_RGB32)
    img.fill(QColor("#f3d9d0"))
    return img


if TYPE_CHECKING:
    from masklens.core.review.verdict_types import VerdictType
    from masklens.gui.browser.sample_browser import SampleBrowser
    from masklens.gui.canvas.sample_view import SampleViewWidget
    from masklens.gui.review.panel import ReviewPanel
    from masklens.gui.state import AppState
    from masklens.gui.widgets.quiet_tabs import QuietTabWidget
    from masklens.gui.window.message_bar import MessageBar


class GalleryContext(WindowPart, Protocol):
    """What the gallery uses of the window: the state, the sample list (its rows, filter and
    sort), the central tabs (it is one; a double-click shows the Sample tab), the Review dock
    (batch verdicts) and the message bar."""

    state: AppState
    browser: SampleBrowser
    tabs: QuietTabWidget
    sample_view: SampleViewWidget
    review_panel: ReviewPanel
    message_bar: MessageBar


class GalleryTiles:
    """The grid's :class:`~masklens.gui.gallery.grid.TileSource` over the window's state."""

    def __init__(self, window: GalleryContext, loader: ThumbLoader, cache: ThumbCache) -> None:
        self.w, self.loader, self.cache = window, loader, cache
        self.rows_of: dict[str, int] = {}  # sample id -> source row, of the tiles asked for
        self._asked: list[tuple[str, Any]] = []  # the loader's last wish list (not repeated)

    def variant(self) -> tuple[Any, ...]:
        """What a thumbnail depends on besides its sample: the set drawn and t."""
        s = self.w.state
        return (id(s.benchmark), s.active, id(s.predictions()), s.score_threshold)

    def _sample(self, src: int) -> Any:
        return self.w.browser.model.samples[src]

    def thumbnail(self, src: int) -> QImage | None:
        sid = self._sample(src).id
        return self.cache.get(sid, self.variant()) or self.cache.latest(sid)

    def caption(self, src: int) -> str:
        return self._sample(src).id

    def glyphs(self, src: int) -> list[tuple[str, str]]:
        model = self.w.browser.model
        keys = model.verdicts.get(self._sample(src).id, "")
        out = []
        for key in filter(None, keys.split(", ")):
            glyph = VERDICT_GLYPHS.get(key) or ((model.verdict_label(key) or key)[:1].upper(), "#6b6b6b")
            out.append(glyph)
        return out

    def input_arrived(self) -> None:
        self.loader.yield_to_gui()

    def visible(self, rows: list[int], ahead: list[int]) -> None:
        """Ask for the thumbnails of the tiles shown (then the next page) that are not drawn yet."""
        s, variant = self.w.state, self.variant()
        kind = s.kind.name if s.kind is not None else None
        preds, t = s.predictions(), s.score_threshold
        jobs: dict[tuple[str, Hashable], Callable[[], QImage]] = {}
        self.rows_of = {}
        for src in [*rows, *ahead]:
            sample = self._sample(src)
            self.rows_of[sample.id] = src
            if self.cache.get(sample.id, variant) is None:
                jobs[(sample.id, variant)] = partial(draw_tile, kind, sample, preds, t)
        asked = list(jobs)
        if asked != self._asked or not asked:  # a repaint of the same page: the loader has them
            self._asked = asked
            self.loader.want(jobs)


#: the batch verdict buttons per line of the gallery's header
BATCH_COLUMNS = 3


class GalleryTab(QWidget):
    """The grid over the sample list's rows, with batch verdicts."""

    def __init__(self, window: GalleryContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.w = window
        self.cache = ThumbCache()
        self.loader = ThumbLoader(self)
        self.tiles = GalleryTiles(window, self.loader, self.cache)
        self.grid = GalleryGrid(self.tiles)
        self.summary = QLabel("")
        legend = QLabel(" ".join(
            f"<span style='background:{QColor(*c).name()}'>&nbsp;&nbsp;&nbsp;</span> {t}"
            for c, t in ((TP, "both"), (FP, "prediction only"), (FN, "ground truth only"))))
        legend.setToolTip("thumbnails: the first panel of each sample, instances scored ≥ t")
        self.legend = legend
        # each on a line of its own, wrapped: a narrow centre (1440 px with both docks) cut them
        self.summary.setWordWrap(True)
        legend.setWordWrap(True)
        top = QVBoxLayout()
        top.setContentsMargins(4, 2, 4, 2)
        top.setSpacing(2)
        top.addWidget(self.summary)
        top.addWidget(legend)
        # the verdict buttons in a grid of BATCH_COLUMNS: every label whole at that width
        self.batch_row = QGridLayout()
        self.batch_row.setContentsMargins(4, 0, 4, 2)
        self.batch_label = QLabel("Selected:")
        self.batch_row.addWidget(self.batch_label, 0, 0)
        self.batch_buttons: dict[str, QPushButton] = {}
        self._build_batch_buttons()
        self.batch_row.setColumnStretch(BATCH_COLUMNS + 1, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addLayout(self.batch_row)
        lay.addWidget(self.grid, 1)
        browser = window.browser
        self.grid.set_source(browser.proxy, browser.table.selectionModel())
        self.loader.ready.connect(self._ready)
        window.window().destroyed.connect(partial(ThumbLoader.stop, self.loader))  # its thread ends with the window
        self.grid.activated.connect(self._open)
        self.grid.batchKey.connect(self.batch_by_shortcut)
        sel = browser.table.selectionModel()
        sel.selectionChanged.connect(lambda *_: self._update_summary())
        for sig in (browser.proxy.layoutChanged, browser.proxy.modelReset, browser.proxy.refiltered):
            sig.connect(self._update_summary)
        s = window.state
        s.benchmarkChanged.connect(self._benchmark_changed)
        s.sampleChanged.connect(lambda _: self.loader.yield_to_gui())  # e.g. an arrow key in the list
        for sig in (s.readoutsChanged, s.predictionsChanged, s.paramsShown):
            sig.connect(self.grid.viewport().update)
        self._update_summary()

    # ------------------------------------------------------------ batch verdicts
    def _build_batch_buttons(self) -> None:
        try:
            from masklens.core.review.verdict_types import VERDICT_TYPES
        except ImportError:  # the review module is optional
            verdict_types: Mapping[str, VerdictType] = {}
        else:
            verdict_types = VERDICT_TYPES
        for vt in verdict_types.values():
            b = QPushButton(f"{vt.label} [{vt.shortcut}]")
            b.setToolTip(f"{vt.description} — for every selected sample (one row each; Ctrl+Z undoes all)")
            b.setFocusPolicy(Qt.FocusPolicy.TabFocus)  # a click leaves the keys in the grid
            b.clicked.connect(lambda _=False, k=vt.key: self.batch_verdict(k))
            n = len(self.batch_buttons)
            self.batch_row.addWidget(b, n // BATCH_COLUMNS, 1 + n % BATCH_COLUMNS)
            self.batch_buttons[vt.key] = b
        self._by_shortcut = {vt.shortcut.lower(): vt.key for vt in verdict_types.values()}
        self.grid.batch_keys = set(self._by_shortcut)

    def selected_ids(self) -> list[str]:
        """The selected samples' ids, in the list's order."""
        rows = self.w.browser.proxy.visible_rows()
        samples = self.w.browser.model.samples
        return [samples[int(rows[i])].id for i in self.grid.selected_rows() if i < len(rows)]

    def batch_verdict(self, verdict: str) -> list[Any]:
        panel = self.w.review_panel
        ids = self.selected_ids()
        if not ids:
            self.w.message_bar.show_message("select samples in the gallery first (click, Shift/Ctrl+click)",
                                            "info")
            return []
        return panel.record_batch(ids, verdict)

    def batch_by_shortcut(self, key: str) -> None:
        verdict = self._by_shortcut.get(key)
        if verdict is not None:
            self.batch_verdict(verdict)

    # ------------------------------------------------------------ state
    def _ready(self, sid: str, variant: Any, img: QImage | None) -> None:
        self.loader.taken(sid, variant)
        if variant[0] != id(self.w.state.benchmark):  # drawn for the benchmark open before
            return
        self.cache.put(sid, variant, img if img is not None else _failed_tile())
        src = self.tiles.rows_of.get(sid)
        if variant == self.tiles.variant() and src is not None:
            self.grid.update_source_row(src)  # its own tile, not the page

    def hideEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().hideEvent(event)
        self.loader.want({})  # another tab: nothing more is drawn for tiles no one sees
        self.tiles._asked = []

    def _benchmark_changed(self) -> None:
        self.cache.clear()
        self.grid.verticalScrollBar().setValue(0)
        self.grid.relayout()

    def _open(self, row: int) -> None:
        self.grid.move_to(row, "keep")
        self.w.tabs.setCurrentWidget(self.w.sample_view)

    def _update_summary(self) -> None:
        n = self.grid.count()
        k = self.grid.selected_count()
        total = self.w.browser.model.rowCount()
        proxy = self.w.browser.proxy
        parts = [f"{n} of {total} samples"]
        if proxy.filter.label and proxy.filter.label != "all samples":
            parts.append(f"filter: {proxy.filter.label}")
        if proxy.search:
            parts.append(f"search: “{proxy.search}”")
        col = proxy.sortColumn()
        if 0 <= col < proxy.columnCount():
            # in words: an arrow read the other way round than the list header's (▼ = ascending there)
            order = "descending" if proxy.sortOrder() == Qt.SortOrder.DescendingOrder else "ascending"
            parts.append(f"sorted by {proxy.headerData(col, Qt.Orientation.Horizontal)}, {order}")
        self.summary.setText(" · ".join([*parts, f"{k} selected"]))
        self.summary.setToolTip("the sample list's rows, filter and sort; Shift/Ctrl+click or "
                                "Shift+arrows select several, a verdict key or button records it for all")
        for b in self.batch_buttons.values():
            b.setEnabled(k > 0)
