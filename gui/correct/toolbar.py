"""The Correction toolbar: sub-tools, brush size, polygon, fill holes, proposals, instances,
undo/redo and accept/discard (see docs/gui.md, "Correct mode")."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QToolBar, QWidget

from masklens.gui.widgets.glyph_icon import glyph_icon

#: sub-tool -> (label, key, tip)
SUBTOOLS = {
    "select": ("Select instance", "V", "click a ground-truth instance to edit it"),
    "brush": ("Brush", "D", "paint the instance (drag); [ and ] change the size"),
    "erase": ("Eraser", "X", "erase from the instance (drag; right button or Shift erases with the brush too)"),
    "polygon": ("Polygon", "L", "click points; Enter closes and fills the polygon"),
    "model": ("Model assist", "J", "click (right click or Shift: negative) or drag a box: the chosen model "
                                   "proposes a mask"),
}
#: name -> (label, key or "", tip); keys with no "" are shortcuts on the canvas area
COMMANDS = {
    "smaller": ("Smaller brush", "[", "brush and eraser radius − 25 %"),
    "larger": ("Larger brush", "]", "brush and eraser radius + 25 %"),
    "close": ("Close polygon", "Return", "close the polygon drawn with Polygon and fill it"),
    "fill": ("Fill holes", "Shift+F", "fill the holes enclosed by the instance"),
    "add": ("Add proposal", "Shift+A", "add the model's proposal to the instance"),
    "subtract": ("Subtract proposal", "Shift+S", "remove the model's proposal from the instance"),
    "replace": ("Replace by proposal", "Shift+R", "the instance becomes the model's proposal"),
    "new": ("New instance", "Shift+N", "start a new, empty instance of the panel's ground truth"),
    "delete": ("Delete instance", "Delete", "delete the selected instance (accepted as a deletion)"),
    "category": ("Change category…", "Shift+C", "give the selected instance another of the benchmark's "
                 "categories; the mask stays (accepted at once)"),
    "undo": ("Undo edit", "", "undo the last stroke of the edit (Ctrl+Z on the canvas while editing)"),
    "redo": ("Redo edit", "", "redo the stroke undone (Ctrl+Shift+Z on the canvas while editing)"),
    "accept": ("Accept edit", "Shift+Return", "accept the corrected instance"),
    "discard": ("Discard edit", "", "drop the edit; the ground truth stays as it was"),
}


#: name → (glyph, fallback letters) of each button's icon (the name and key are in its tooltip)
ICONS = {
    "select": ("↖", "Sel"), "brush": ("●", "Br"), "erase": ("◌", "Er"), "polygon": ("⬠", "Pg"),
    "model": ("✦", "AI"), "smaller": ("−", "−"), "larger": ("+", "+"), "close": ("↵", "Cl"),
    "fill": ("◉", "Fi"), "add": ("⊕", "A+"), "subtract": ("⊖", "A−"), "replace": ("⇄", "A="),
    "new": ("✚", "New"), "delete": ("✖", "Del"), "category": ("#", "#"), "undo": ("↶", "Un"),
    "redo": ("↷", "Re"), "accept": ("✔", "OK"), "discard": ("✘", "X"),
}


def tip(label: str, key: str, what: str) -> str:
    """A button's tooltip: its name, its key, what it does."""
    return f"{label} ({key}): {what}" if key else f"{label}: {what}"


class CorrectionToolbar(QToolBar):
    """Actions only; :class:`~masklens.gui.correct.tool.CorrectionTool` connects them."""

    def __init__(self, parent: QWidget, scope: QWidget) -> None:
        super().__init__("Correction", parent)
        self.setObjectName("correction-toolbar")
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)  # fits 1440 px; names in tooltips
        group = QActionGroup(self)
        self.subtools: dict[str, QAction] = {}
        for name, (label, key, what) in SUBTOOLS.items():
            act = QAction(glyph_icon(*ICONS[name]), label, self, checkable=True)
            act.setShortcut(key)
            act.setToolTip(tip(label, key, what))
            act.setChecked(name == "select")
            group.addAction(act)
            self.addAction(act)
            self.subtools[name] = act
        self.addSeparator()
        self.commands: dict[str, QAction] = {}
        for name, (label, key, what) in COMMANDS.items():
            act = QAction(glyph_icon(*ICONS[name]), label, self)
            if key:
                act.setShortcut(key)
            act.setToolTip(tip(label, key, what))
            self.commands[name] = act
            if name in ("larger", "fill", "replace", "category", "redo"):
                self.addAction(act)
                self.addSeparator()
            else:
                self.addAction(act)
        for act in [*self.subtools.values(), *self.commands.values()]:
            if not act.shortcut().isEmpty():  # the canvas area only: never while typing elsewhere
                act.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
                scope.addAction(act)
