"""The window's size, place and docks between sessions, and View › Reset layout.

The geometry is saved as the window's own rectangle (``normalGeometry()``: the client area, no
frame) and given back as exactly that rectangle. Qt's ``restoreGeometry`` fits the *framed*
window into the screen, so a window as large as the screen came back 1 px right, 25 px down and
26 px shorter — and again on every restart. A rectangle on no screen any more (a monitor gone)
is moved onto the primary one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QRect, QSize, Qt, QTimer
from PySide6.QtGui import QGuiApplication

if TYPE_CHECKING:
    from masklens.gui.window.main_window import MainWindow

DEFAULT_SIZE = (1500, 950)


def worth_saving(size: QSize, area: QRect, least: QSize) -> bool:
    """False for a window larger than the screens' area although it would fit in it (a layout
    pushed past the screen, e.g. by a very long label): such a layout is not saved. A window
    that cannot fit (its minimum is larger than the area) is saved as it is."""
    fits_at_all = area.width() >= least.width() and area.height() >= least.height()
    return not (fits_at_all and (size.width() > area.width() or size.height() > area.height()))


def save_geometry(window: MainWindow, settings: Any) -> None:
    """Into ``settings``: the window's rectangle, whether it is maximised, its docks and toolbars
    — unless the window has grown past the screens (then what was saved before stays)."""
    r = window.normalGeometry() if window.isMaximized() or window.isFullScreen() else window.geometry()
    screen = window.screen()
    if screen is not None and not worth_saving(r.size(), screen.availableVirtualGeometry(), window.minimumSizeHint()):
        return
    settings.window_rect = [r.x(), r.y(), r.width(), r.height()]
    settings.maximized = bool(window.isMaximized())
    settings.geometry = bytes(window.saveGeometry().toBase64().data()).decode()  # read by older versions
    settings.window_state = bytes(window.saveState().toBase64().data()).decode()


def _on_a_screen(rect: QRect) -> bool:
    return any(s.geometry().intersects(rect) for s in QGuiApplication.screens())


def _area_of(rect: QRect) -> QRect:
    """The available area of the screen ``rect`` lies on most (the primary one if none)."""
    best, most = QGuiApplication.primaryScreen(), 0
    for s in QGuiApplication.screens():
        common = s.geometry().intersected(rect)
        if common.width() * common.height() > most:
            best, most = s, common.width() * common.height()
    return best.availableGeometry() if best is not None else QRect(0, 0, *DEFAULT_SIZE)


def _within(rect: QRect, area: QRect) -> bool:
    return rect.width() <= area.width() and rect.height() <= area.height()


def restore_geometry(window: MainWindow, settings: Any) -> None:
    """The saved rectangle exactly, moved and cut to the screen's available area where it does
    not fit in it (settings of older versions: Qt's own saved geometry)."""
    rect = settings.window_rect
    if isinstance(rect, list) and len(rect) == 4 and all(isinstance(v, int) for v in rect) and rect[2] > 0 < rect[3]:
        r = QRect(*rect)
        if _on_a_screen(r) and _within(r, _area_of(r)):
            window.setGeometry(r)
        else:  # on no screen any more, or larger than its screen (saved at another scale factor)
            area = _area_of(r)
            w, h = min(r.width(), area.width()), min(r.height(), area.height())
            x = min(max(r.x(), area.left()), area.right() + 1 - w)
            y = min(max(r.y(), area.top()), area.bottom() + 1 - h)
            window.setGeometry(x, y, w, h)
        if settings.maximized:
            window.setWindowState(window.windowState() | Qt.WindowState.WindowMaximized)
    elif settings.geometry:
        window.restoreGeometry(QByteArray.fromBase64(settings.geometry.encode()))
    else:  # a first start: the first-run size, within the screen (e.g. 960×540 at a scale factor of 2)
        area = _area_of(QRect(0, 0, *DEFAULT_SIZE))
        window.resize(min(window.width(), area.width()), min(window.height(), area.height()))


#: a right dock column shorter than twice this (pixels) gives its lower docks LOWER_DOCKS_SHORT
SHORT_COLUMN = 330
LOWER_DOCKS_SHORT = 130
#: the first-run widths of the side docks
FIRST_RUN_WIDTHS = {"dock-samples": 520, "dock-readout": 360, "dock-typed-prompts": 360, "dock-review": 360}


def size_docks(window: MainWindow) -> None:
    """The first-run widths and heights of the docks (the chosen widths, also where the window
    is too narrow for them now)."""
    window.dock_widths.choose(FIRST_RUN_WIDTHS)
    window.resizeDocks([window.browser_dock, window.readout_dock],
                       [FIRST_RUN_WIDTHS["dock-samples"], FIRST_RUN_WIDTHS["dock-readout"]], Qt.Orientation.Horizontal)
    # the Readout dock first: the tabbed Typed prompts / Review docks below get a third of the
    # column, at most 330 px, and in a short window only what a few of their lines need
    lower = window.review_dock if window.review_dock.isVisible() and not window.live_dock.isVisible() else window.live_dock
    central = window.centralWidget()
    column = central.height() if central is not None else window.height()  # as tall as the right dock column
    below = min(330, column // 3) if column >= 2 * SHORT_COLUMN else LOWER_DOCKS_SHORT
    window.resizeDocks([window.readout_dock, lower], [max(column - below, 1), below], Qt.Orientation.Vertical)


def fitted_size(window: MainWindow) -> QSize:
    """The window's size, no larger than the first-run size, nor than the screen where it fits."""
    w, h = min(window.width(), DEFAULT_SIZE[0]), min(window.height(), DEFAULT_SIZE[1])
    screen = window.screen()
    if screen is not None:
        area, least = screen.availableGeometry(), window.minimumSizeHint()
        if area.width() >= least.width():
            w = min(w, area.width())
        if area.height() >= least.height():
            h = min(h, area.height())
    return QSize(w, h)


def reset_layout(window: MainWindow) -> None:
    """View › Reset layout: every dock back in its place, shown, docked, at its first-run size; the
    toolbars back; a window grown past its first-run size (or the screen) brought back within."""
    if window.isMaximized() or window.isFullScreen():
        window.showNormal()
    for dock in window.dock_widths.docks:
        dock.setFloating(False)
    window.restore_layout(window.default_state)
    for dock in window.dock_widths.docks:
        dock.show()
    window.resize(fitted_size(window))
    window.readout_dock.raise_()
    window.live_dock.raise_()  # the tab shown first in its column, as on a first run

    QTimer.singleShot(0, lambda: size_docks(window))
    window.message_bar.show_message("layout reset: docks, toolbars and window size as on a first run", "info")
