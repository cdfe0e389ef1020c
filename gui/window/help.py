"""Help: the keyboard-shortcut sheet (F1), the filter-language reference and the documentation.

The sheet is generated from :func:`registered_actions` — the very list the action-table test
walks and triggers (tests/gui/test_gui_actions.py) — so a shortcut added, changed or removed shows
here at once and can never drift from what the keys do."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from PySide6.QtCore import QObject, Qt, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHeaderView,
    QLabel,
    QMenu,
    QMenuBar,
    QTableWidget,
    QTableWidgetItem,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from masklens.gui.window.context import WindowPart

if TYPE_CHECKING:
    from masklens.gui.browser.sample_browser import SampleBrowser
    from masklens.gui.state import AppState
    from masklens.gui.window.message_bar import MessageBar

_Child = TypeVar("_Child", bound=QObject)


class HelpContext(WindowPart, Protocol):
    """What Help uses of the window (a QMainWindow): its menus and actions (the shortcut sheet),
    the sample list (its filter columns and field), the state (the kind) and the message bar."""

    browser: SampleBrowser
    state: AppState
    message_bar: MessageBar

    def menuBar(self) -> QMenuBar: ...  # noqa: N802 - Qt's name

    def actions(self) -> list[QAction]: ...

    def findChildren(self, type: type[_Child], /) -> list[_Child]: ...  # noqa: N802 - Qt's name


#: what the user types into the filter field (gui/browser/filters.py's grammar, in words)
FILTER_SYNTAX = (
    "Type <b>key op value</b> [<b>and</b> key op value …] in the filter field and press Enter. "
    "<b>op</b> is one of <code>&lt; &lt;= &gt; &gt;= == != ~</code> (<code>~</code>: contains). A key "
    "matches a column exactly, else ignoring case, else as the unique end of a dotted name "
    "(<code>class</code> for <code>negative.class</code>).{example} Click a column to put its name in the filter."
)
FIXED_COLUMNS = {
    "sample": "the sample's id",
    "group": "the benchmark's group of the sample (edit type, split, category …)",
    "verdict": "your review verdicts on the sample — the reviewer named in the Review dock "
               "(empty: not reviewed by you; the “unreviewed” preset and N go by it)",
    "others": "the other reviewers' verdicts on the sample, as reviewer: verdict (e.g. "
              "others ~ ben)",
}


def registered_actions(window: HelpContext) -> list[QAction]:
    """The window's actions: menu leaves, its own, its toolbars', and every widget's action that
    has a shortcut — each once, in menu order (QWidgetActions, i.e. toolbar widgets, left out)."""
    out: list[QAction] = []

    def add(a: QAction) -> None:
        if a.isSeparator() or a in out or a.menu() is not None or type(a) is not QAction:
            return
        out.append(a)

    def walk(actions: list[QAction]) -> None:
        for a in actions:
            menu = a.menu()  # a QMenu, typed QObject by QtGui
            if isinstance(menu, QMenu):
                walk(menu.actions())
            else:
                add(a)

    walk(window.menuBar().actions())
    for a in window.actions():
        add(a)
    for bar in window.findChildren(QToolBar):  # every toolbar's buttons, with a key or not
        for a in bar.actions():
            add(a)
    for widget in window.findChildren(QWidget):
        for a in widget.actions():
            if not a.shortcut().isEmpty():
                add(a)
    return out


def _where(window: HelpContext) -> dict[int, str]:
    """Each menu leaf's path ("View › Colours…"), by id of the action."""
    paths: dict[int, str] = {}

    def walk(actions: list[QAction], prefix: str) -> None:
        for a in actions:
            name = a.text().replace("&", "")
            menu = a.menu()  # a QMenu, typed QObject by QtGui
            if isinstance(menu, QMenu):
                walk(menu.actions(), f"{prefix}{name} › ")
            elif not a.isSeparator():
                paths.setdefault(id(a), prefix.rstrip(" ›") or name)

    walk(window.menuBar().actions(), "")
    return paths


def _scope(action: QAction) -> str:
    """Where a key outside the menus acts: a bare letter or digit only on the canvas or the sample
    list (gui/window/key_scope.py), a key with Ctrl/Alt or a special key anywhere."""
    for seq in action.shortcuts():
        combo = seq[0]  # type: ignore[index]  # PySide6's stub lacks QKeySequence.__getitem__ (operator[])
        if combo.keyboardModifiers() == Qt.KeyboardModifier.NoModifier and combo.key().value < 0x01000000:
            return "canvas or sample list"
    return "anywhere in the window"


def shortcut_rows(window: HelpContext) -> list[tuple[str, str, str]]:
    """(keys, action, where) for every registered action with a shortcut, keys in the platform's
    words; actions without keys are left out (the menus list them)."""
    where = _where(window)
    rows = []
    for a in registered_actions(window):
        keys = [s.toString(QKeySequence.SequenceFormat.NativeText) for s in a.shortcuts()]
        if keys:
            place = where.get(id(a)) or _scope(a)
            rows.append((", ".join(keys), a.text().replace("&", ""), place))
    return rows


def _example(window: HelpContext) -> str:
    """" Example: <code>pos_max_iou &lt; 0.5 and group == SM</code>." from the open benchmark's
    first numeric column and the first sample's group ("" before anything is open)."""
    model = window.browser.model
    if not model.rowCount():
        return ""
    flat = model.flat(0)
    numeric = next((c for c in model.columns if isinstance(flat.get(c), float)), None)
    if numeric is None:
        return ""
    group = model.samples[0].group
    more = f" and group == {group}" if group else ""
    return f" Example: <code>{numeric} &lt; 0.5{more}</code>."


def _table(heads: list[str], rows: Sequence[tuple[str, ...]]) -> QTableWidget:
    table = QTableWidget(len(rows), len(heads))
    table.setHorizontalHeaderLabels(heads)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            item = QTableWidgetItem(text)
            item.setToolTip(text)
            table.setItem(r, c, item)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    table.setWordWrap(False)
    table.setAlternatingRowColors(True)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
    return table


class ShortcutSheet(QDialog):
    """Every key of the window, from the action table; one-key shortcuts act with the focus on
    the canvas or the sample list."""

    def __init__(self, window: HelpContext) -> None:
        super().__init__(window.window())
        self.setWindowTitle("Keyboard shortcuts")
        self.rows = shortcut_rows(window)
        self.table = _table(["keys", "action", "where"], self.rows)
        note = QLabel("Single letters act while the canvas or the sample list has the focus (a blue "
                      "frame). A focused slider takes ←/→, PgUp/PgDn, Home/End; Tab leaves a field. "
                      "Esc with a correction open closes the edit (Correct mode stays on); an edit with "
                      "changes is never dropped unasked: closing it, another sample or benchmark, "
                      "another tool or quitting asks Accept / Discard / Cancel.")
        note.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table, 1)
        lay.addWidget(note)
        self.resize(620, 560)


class FilterReference(QDialog):
    """The open benchmark's filter columns with their meaning; a click on one puts its name in the
    sample list's filter field, at the cursor."""

    def __init__(self, window: HelpContext) -> None:
        super().__init__(window.window())
        self.setWindowTitle("Filter language")
        self.window_ = window
        from masklens.gui.browser.sample_table import metric_tooltip
        from masklens.gui.cards import card_for

        kind = window.state.kind
        # the card's words for the record's fields (each per sample, as the column is), else the
        # kind's metric definitions (some of those define the whole benchmark's figure)
        help_ = {**dict(kind.metric_help), **card_for(kind.name).HELP} if kind is not None else {}

        self.rows: list[tuple[str, str]] = []
        for name in window.browser.model.filter_columns():
            meaning = FIXED_COLUMNS.get(name) or metric_tooltip(name, help_) or ""
            first = meaning.splitlines()[0] if meaning else ""
            self.rows.append((name, first.removeprefix(f"{name}: ")))
        syntax = QLabel(FILTER_SYNTAX.format(example=_example(window)))
        syntax.setWordWrap(True)
        syntax.setTextFormat(Qt.TextFormat.RichText)
        self.table = _table(["column", "meaning"], self.rows)
        self.table.cellClicked.connect(lambda r, _c: self.insert(self.rows[r][0]))
        empty = QLabel("Open a benchmark (and its predictions) to see its columns.")
        empty.setVisible(not self.rows)
        lay = QVBoxLayout(self)
        lay.addWidget(syntax)
        lay.addWidget(empty)
        lay.addWidget(self.table, 1)
        self.resize(640, 560)

    def insert(self, name: str) -> None:
        """``name`` into the filter field at its cursor (a space apart from what is there)."""
        edit = self.window_.browser.expression
        text, at = edit.text(), edit.cursorPosition()
        before = "" if at == 0 or text[at - 1] == " " else " "
        edit.setText(f"{text[:at]}{before}{name} {text[at:]}")
        edit.setCursorPosition(at + len(before) + len(name) + 1)
        main = edit.window()  # typing goes on in the field: the window comes before this sheet
        main.raise_()
        main.activateWindow()
        edit.setFocus(Qt.FocusReason.OtherFocusReason)


def documentation_path() -> Path | None:
    """``gui.md`` of the docs beside the window's code: the checkout's ``docs/``, or the installed
    package's ``masklens/docs`` (pyproject ships docs/ as ``masklens.docs``); None when absent."""
    import masklens.gui as gui_pkg

    page = Path(gui_pkg.__file__).resolve().parent.parent / "docs" / "gui.md"
    return page if page.is_file() else None


class HelpCommands(QObject):
    """Help › Keyboard shortcuts (F1, wherever the focus is), Filter language…, Documentation:
    ``actions`` in menu order; ``sheet`` and ``filter_reference`` are the dialogs last opened."""

    def __init__(self, window: HelpContext) -> None:
        super().__init__(window.window())
        self.window = window
        self.sheet: ShortcutSheet | None = None
        self.filter_reference: FilterReference | None = None
        self.keys_action = QAction("&Keyboard shortcuts", window.window())
        self.keys_action.setShortcuts(QKeySequence.keyBindings(QKeySequence.StandardKey.HelpContents)
                                      or [QKeySequence("F1")])
        self.keys_action.triggered.connect(self.show_sheet)
        filter_action = QAction("&Filter language…", window.window())
        filter_action.triggered.connect(self.show_filter_reference)
        documentation_action = QAction("&Documentation", window.window())
        documentation_action.triggered.connect(self.open_documentation)
        self.actions = [self.keys_action, filter_action, documentation_action]

    def show_sheet(self) -> None:
        self.sheet = ShortcutSheet(self.window)  # built now: every action of this moment
        self.sheet.show()

    def show_filter_reference(self) -> None:
        self.filter_reference = FilterReference(self.window)
        self.filter_reference.show()

    def open_documentation(self) -> bool:
        message_bar = self.window.message_bar
        path = documentation_path()
        if path is None:
            message_bar.show_message("the documentation is not on this machine: it is the docs/ "
                                     "folder of the masklens source", "warning")
            return False
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
            message_bar.show_message(f"no application opens {path}", "warning")
            return False
        message_bar.show_message(f"opened {path}", "info")
        return True
