"""The gallery's grid: a virtualised view of the sample browser's own filter/sort proxy.

Tile ``i`` is proxy row ``i``: the grid shows exactly the list's rows in the list's order (one
model, two views), and it shares the list's selection model, so the current sample and the
selected ones are the same in both. Only the tiles inside the viewport are painted, whatever
the number of samples (a paint costs the visible tiles, never the benchmark); their pictures
come from a :class:`TileSource` that draws them off the GUI thread.

Keys: arrows move, Shift+arrows extend the selection, Ctrl+arrows move without selecting,
Ctrl+Space toggles, PgUp/PgDn a page, Home/End, Ctrl+A all, Enter opens the sample, Esc keeps
only the current one. Mouse: click, Ctrl+click toggles, Shift+click a range, double-click opens.
A move key held down moves the frame at each repeat and the list's current sample once, at
the end (:mod:`masklens.gui.gallery.held_keys`).
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from PySide6.QtCore import (
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QRect,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QImage, QKeyEvent, QPainter, QPen
from PySide6.QtWidgets import QAbstractScrollArea, QWidget

from masklens.gui.gallery.held_keys import HeldMove

THUMB_W, THUMB_H = 160, 120
TILE_W, TILE_H = THUMB_W + 12, THUMB_H + 28
Flag = QItemSelectionModel.SelectionFlag
_MOVES = {Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp,
          Qt.Key.Key_PageDown, Qt.Key.Key_Home, Qt.Key.Key_End}

#: the events after which the thumbnail thread lets the GUI thread answer first
_INPUTS = {QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride, QEvent.Type.MouseButtonPress,
           QEvent.Type.MouseButtonDblClick, QEvent.Type.Wheel}


class TileSource(Protocol):
    """What the grid draws for source row ``src`` (a sample of the browser's table)."""

    def thumbnail(self, src: int) -> QImage | None: ...
    def caption(self, src: int) -> str: ...
    def glyphs(self, src: int) -> list[tuple[str, str]]: ...
    def visible(self, rows: list[int], ahead: list[int]) -> None: ...
    def input_arrived(self) -> None: ...


class GalleryGrid(QAbstractScrollArea):
    """Tiles of the proxy's rows, ``columns()`` per line, painted only where visible."""

    activated = Signal(int)  # proxy row: Enter or double-click
    #: a one-key verdict pressed while several samples are selected (the verdict's shortcut)
    batchKey = Signal(str)

    def __init__(self, tiles: TileSource, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tiles = tiles
        self.proxy: Any = None
        self.selection: QItemSelectionModel | None = None
        self.batch_keys: set[str] = set()  # lower-case verdict shortcuts ("m", "w", …)
        self._anchor = 0
        self.painted: list[int] = []  # source rows of the tiles shown at the last paint (tests, benchmarks)
        self._shown: dict[int, int] = {}  # source row -> proxy row, of the tiles shown
        self._captions: dict[str, str] = {}  # caption -> its elided text
        #: at the last paint: whether the current tile was in view, and the first tile in view
        #: (what a resize keeps in view: the current tile, else the first one)
        self._in_view: tuple[bool, int] = (False, 0)
        self.held = HeldMove(self.move_to, self)  # a held move key: the list follows at the end
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.viewport().setAutoFillBackground(True)
        self.verticalScrollBar().valueChanged.connect(self._scrolled)

    def _scrolled(self, _value: int) -> None:
        self.tiles.input_arrived()  # a wheel, a drag, a key: the window answers first
        self.viewport().update()

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() in _INPUTS:
            self.tiles.input_arrived()
        return super().viewportEvent(event)

    def set_source(self, proxy: Any, selection: QItemSelectionModel) -> None:
        self.proxy, self.selection = proxy, selection
        for sig in (proxy.layoutChanged, proxy.modelReset, proxy.rowsInserted, proxy.rowsRemoved):
            sig.connect(self.relayout)
        proxy.dataChanged.connect(lambda *_: self.viewport().update())
        selection.selectionChanged.connect(lambda *_: self.viewport().update())
        selection.currentChanged.connect(self._current_moved)
        self.relayout()

    # ------------------------------------------------------------ geometry
    def count(self) -> int:
        return self.proxy.rowCount() if self.proxy is not None else 0

    def columns(self) -> int:
        return max(1, self.viewport().width() // TILE_W)

    def relayout(self, *_: Any) -> None:
        lines = -(-self.count() // self.columns())
        bar = self.verticalScrollBar()
        bar.setRange(0, max(0, lines * TILE_H - self.viewport().height()))
        bar.setPageStep(max(1, self.viewport().height()))
        bar.setSingleStep(TILE_H // 3)
        self.viewport().update()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        """The tiles flow into the new width; the current tile stays in view if it was (else
        the first tile in view stays the first)."""
        super().resizeEvent(event)
        self.relayout()
        current_shown, first = self._in_view
        cur = self.current()
        if current_shown and cur >= 0:
            self.ensure_visible(cur)
        else:
            self.verticalScrollBar().setValue((first // self.columns()) * TILE_H)

    def tile_rect(self, i: int) -> QRect:
        cols = self.columns()
        x0 = max(0, (self.viewport().width() - cols * TILE_W) // 2)
        return QRect(x0 + (i % cols) * TILE_W, (i // cols) * TILE_H - self.verticalScrollBar().value(),
                     TILE_W, TILE_H)

    def tile_at(self, x: int, y: int) -> int | None:
        cols = self.columns()
        x0 = max(0, (self.viewport().width() - cols * TILE_W) // 2)
        col, line = (x - x0) // TILE_W, (y + self.verticalScrollBar().value()) // TILE_H
        i = line * cols + col
        return i if 0 <= col < cols and 0 <= i < self.count() else None

    def visible_range(self) -> range:
        """Proxy rows with a tile (partly) inside the viewport."""
        cols, top = self.columns(), self.verticalScrollBar().value()
        first = (top // TILE_H) * cols
        last = ((top + self.viewport().height()) // TILE_H + 1) * cols
        return range(first, min(last, self.count()))

    def ensure_visible(self, i: int) -> None:
        bar, y = self.verticalScrollBar(), (i // self.columns()) * TILE_H
        if y < bar.value():
            bar.setValue(y)
        elif y + TILE_H > bar.value() + self.viewport().height():
            bar.setValue(y + TILE_H - self.viewport().height())

    # ------------------------------------------------------------ painting
    def paintEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        """Draw the tiles inside the exposed region only (a thumbnail that arrives repaints its
        own tile); ask the tile source for the pictures of every tile shown and the next page."""
        if self.proxy is None:
            return
        p = QPainter(self.viewport())
        rows = self.proxy.visible_rows()
        shown = range(self.visible_range().start, min(self.visible_range().stop, len(rows)))
        region = event.region()
        cur = self.current()
        picked = self._selected_in(shown) if self.held.row is None else self._held_selection(shown)
        cols, top = self.columns(), self.verticalScrollBar().value()
        x0 = max(0, (self.viewport().width() - cols * TILE_W) // 2)
        self.painted = rows[shown.start: shown.stop].tolist()
        self._shown = {src: i for i, src in zip(shown, self.painted, strict=True)}
        for i, src in zip(shown, self.painted, strict=True):
            rect = QRect(x0 + (i % cols) * TILE_W, (i // cols) * TILE_H - top, TILE_W, TILE_H)
            if region.intersects(rect):
                self._paint_tile(p, rect, src, i in picked, i == cur)
        if self.hasFocus():  # where the keys go (a style sheet would slow every paint down)
            p.setBrush(Qt.BrushStyle.NoBrush)  # not the last badge's colour over the whole grid
            p.setPen(QPen(QColor("#0072B2"), 2))
            p.drawRect(self.viewport().rect().adjusted(1, 1, -1, -1))
        p.end()
        self._in_view = (cur in shown, shown.start)
        ahead = range(shown.stop, min(shown.stop + len(shown), len(rows)))
        self.tiles.visible(list(self.painted), rows[ahead.start: ahead.stop].tolist())

    def update_source_row(self, src: int) -> None:
        """Repaint the tile of source row ``src`` if it is shown (its thumbnail arrived)."""
        i = self._shown.get(src)
        if i is not None:
            self.viewport().update(self.tile_rect(i))

    def _caption(self, src: int, fm: Any) -> str:
        text = self.tiles.caption(src)
        out = self._captions.get(text)
        if out is None:
            if len(self._captions) > 4096:  # ids seen while scrolling: a bounded memo
                self._captions.clear()
            out = self._captions[text] = fm.elidedText(text, Qt.TextElideMode.ElideMiddle, THUMB_W)
        return out

    def _paint_tile(self, p: QPainter, rect: QRect, src: int, selected: bool, current: bool) -> None:
        pal = self.palette()
        inner = rect.adjusted(3, 3, -3, -3)
        if selected:  # the palette's selection colours (a light or a dark one alike)
            p.fillRect(inner, pal.highlight().color())
        img = self.tiles.thumbnail(src)
        box = QRect(inner.x() + 3, inner.y() + 3, THUMB_W, THUMB_H)
        if img is None:  # not drawn yet: a placeholder a shade off the window's colour
            p.fillRect(box, pal.midlight().color())
        else:
            p.drawImage(box.x() + (THUMB_W - img.width()) // 2, box.y() + (THUMB_H - img.height()) // 2, img)
        x = box.right() - 2
        for glyph, colour in reversed(self.tiles.glyphs(src)):
            badge = QRect(x - 18, box.y() + 2, 18, 18)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(colour))
            p.drawEllipse(badge)
            p.setPen(QColor("white"))
            p.drawText(badge, Qt.AlignmentFlag.AlignCenter, glyph)
            x -= 20
        p.setPen(pal.highlightedText().color() if selected else pal.text().color())
        text_box = QRect(inner.x() + 3, box.bottom() + 2, THUMB_W, inner.bottom() - box.bottom() - 2)
        p.drawText(text_box, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter,
                   self._caption(src, p.fontMetrics()))
        if current:
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(QColor("#0072B2"), 3))
            p.drawRect(inner.adjusted(1, 1, -1, -1))

    # ------------------------------------------------------------ selection (the list's model)
    def current(self) -> int:
        """The tile with the frame: the list's current row, or where a held key has got to."""
        if self.held.row is not None:
            return self.held.row
        idx = self.selection.currentIndex() if self.selection is not None else QModelIndex()
        return idx.row() if idx.isValid() else -1

    def _held_selection(self, shown: range) -> set[int]:
        """What the selection will be once the held move is committed (as drawn meanwhile)."""
        row = self.held.row if self.held.row is not None else -1
        if self.held.how == "only":
            return {row}
        if self.held.how == "extend":
            lo, hi = min(self._anchor, row), max(self._anchor, row)
            return set(range(max(lo, shown.start), min(hi + 1, shown.stop)))
        return self._selected_in(shown)

    def _selected_in(self, shown: range) -> set[int]:
        """Selected proxy rows within ``shown`` (read from the ranges, not asked row by row)."""
        out: set[int] = set()
        if self.selection is None:
            return out
        for rng in self.selection.selection():  # type: ignore[attr-defined]  # the stubs omit QItemSelection.__iter__
            out.update(range(max(rng.top(), shown.start), min(rng.bottom() + 1, shown.stop)))
        return out

    def focusInEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().focusInEvent(event)
        self.viewport().update()

    def focusOutEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self.held.flush()
        super().focusOutEvent(event)
        self.viewport().update()

    def selected_spans(self) -> list[tuple[int, int]]:
        """The selected proxy rows as sorted, disjoint ``(first, stop)`` spans, merged from the
        selection's ranges: its cost is the number of ranges (one after Ctrl+A), not of rows."""
        if self.selection is None:
            return []
        n = self.count()
        spans: list[tuple[int, int]] = []
        ranges = self.selection.selection()
        for lo, hi in sorted((r.top(), min(r.bottom() + 1, n)) for r in ranges):  # type: ignore[attr-defined]  # as above
            if lo >= hi:
                continue
            if spans and lo <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(spans[-1][1], hi))
            else:
                spans.append((lo, hi))
        return spans

    def selected_count(self) -> int:
        return sum(hi - lo for lo, hi in self.selected_spans())

    def selected_rows(self) -> list[int]:
        """Selected proxy rows, in order (from the merged spans, not one index per cell)."""
        return [r for lo, hi in self.selected_spans() for r in range(lo, hi)]

    def _row_selection(self, a: int, b: int) -> QItemSelection:
        lo, hi = min(a, b), max(a, b)
        last = max(0, self.proxy.columnCount() - 1)
        return QItemSelection(self.proxy.index(lo, 0), self.proxy.index(hi, last))

    def move_to(self, i: int, how: str = "only") -> None:
        """Make ``i`` current: ``only`` selects just it, ``extend`` the range from the anchor,
        ``toggle`` flips it, ``keep`` leaves the selection as it is."""
        n = self.count()
        if not n or self.selection is None:
            return
        i = max(0, min(i, n - 1))
        idx = self.proxy.index(i, 0)
        if how == "extend":
            self.selection.select(self._row_selection(self._anchor, i), Flag.ClearAndSelect)
            self.selection.setCurrentIndex(idx, Flag.NoUpdate)
        elif how == "toggle":
            self._anchor = i
            self.selection.setCurrentIndex(idx, Flag.NoUpdate)
            self.selection.select(self._row_selection(i, i), Flag.Toggle)
        elif how == "keep":
            self.selection.setCurrentIndex(idx, Flag.NoUpdate)
        else:
            self._anchor = i
            self.selection.setCurrentIndex(idx, Flag.ClearAndSelect | Flag.Rows)
        self.ensure_visible(i)
        self.viewport().update()

    def select_all(self) -> None:
        if self.count() and self.selection is not None:
            self.selection.select(self._row_selection(0, self.count() - 1), Flag.ClearAndSelect)

    def _current_moved(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.ensure_visible(current.row())
        self.viewport().update()

    # ------------------------------------------------------------ input
    def event(self, event: QEvent) -> bool:
        if event.type() in _INPUTS:
            self.tiles.input_arrived()
        if event.type() == QEvent.Type.ShortcutOverride:
            key_event = cast(QKeyEvent, event)  # a ShortcutOverride event is a key event
            if not (key_event.isAutoRepeat() and key_event.key() in _MOVES):
                self.held.flush()  # e.g. a verdict key: it acts on the sample the frame is on
            if self._handles(key_event):
                event.accept()  # these keys are the grid's, not the window's (PgDn = a page here)
                return True
        elif event.type() == QEvent.Type.Hide:
            self.held.flush()
        return super().event(event)

    def _handles(self, e: QKeyEvent) -> bool:
        ctrl = bool(e.modifiers() & Qt.KeyboardModifier.ControlModifier)
        if e.key() in _MOVES or e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape):
            return True
        if ctrl and e.key() in (Qt.Key.Key_A, Qt.Key.Key_Space):
            return True
        return (not ctrl and e.text().lower() in self.batch_keys and self.selected_count() > 1)

    def keyPressEvent(self, e: QKeyEvent) -> None:  # noqa: N802 - Qt override
        mods = e.modifiers()
        shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        cur, cols = max(self.current(), 0), self.columns()
        page = cols * max(1, self.viewport().height() // TILE_H)
        steps: dict[int, int] = {Qt.Key.Key_Left: -1, Qt.Key.Key_Right: 1, Qt.Key.Key_Up: -cols,
                                 Qt.Key.Key_Down: cols, Qt.Key.Key_PageUp: -page, Qt.Key.Key_PageDown: page}
        targets: dict[int, int] = {Qt.Key.Key_Home: 0, Qt.Key.Key_End: self.count() - 1}
        step, target = steps.get(e.key()), targets.get(e.key())
        i = cur + step if step is not None else target
        if i is not None:
            i, how = (i if self.current() >= 0 else 0), "extend" if shift else "keep" if ctrl else "only"
            if e.isAutoRepeat():  # held down: the frame moves now, the list when it is let go
                i = max(0, min(i, self.count() - 1))
                self.held.hold(i, how)
                self.ensure_visible(i)
                self.viewport().update()
            else:
                self.held.flush()
                self.move_to(i, how)
            return
        self.held.flush()
        if ctrl and e.key() == Qt.Key.Key_A:
            self.select_all()
        elif ctrl and e.key() == Qt.Key.Key_Space:
            self.move_to(cur, "toggle")
        elif e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.current() >= 0:
            self.activated.emit(self.current())
        elif e.key() == Qt.Key.Key_Escape and self.current() >= 0:
            self.move_to(self.current())
        elif not ctrl and e.text().lower() in self.batch_keys and self.selected_count() > 1:
            self.batchKey.emit(e.text().lower())
        else:
            super().keyPressEvent(e)

    def keyReleaseEvent(self, e: QKeyEvent) -> None:  # noqa: N802 - Qt override
        if not e.isAutoRepeat():
            self.held.flush()  # the held key let go: the list, readout and Review dock follow
        super().keyReleaseEvent(e)

    def mousePressEvent(self, e: Any) -> None:  # noqa: N802 - Qt override
        self.held.flush()
        i = self.tile_at(int(e.position().x()), int(e.position().y()))
        if i is None or e.button() != Qt.MouseButton.LeftButton:
            return super().mousePressEvent(e)
        mods = e.modifiers()
        how = ("extend" if mods & Qt.KeyboardModifier.ShiftModifier
               else "toggle" if mods & Qt.KeyboardModifier.ControlModifier else "only")
        self.setFocus(Qt.FocusReason.MouseFocusReason)
        self.move_to(i, how)

    def mouseDoubleClickEvent(self, e: Any) -> None:  # noqa: N802 - Qt override
        i = self.tile_at(int(e.position().x()), int(e.position().y()))
        if i is not None:
            self.activated.emit(i)

