"""Visual prompts: boxes and positive/negative points drawn on the canvas, run with the text prompt.

Tools (toolbar "Prompt tools"; one-key shortcuts act with the focus on the canvas or list):
Pan ``H``, Box ``B`` (drag), Points ``P`` (left click positive, right click or Shift+click
negative); ``Esc`` cancels a box being drawn, else clears the drawn prompt and returns to
Pan; ``Ctrl+Return`` runs it. What the backends do with them:

- ``sam3``: text + boxes as exemplars (a box alone is a visual query; points are refused);
- ``grounded-sam2`` / ``owlv2-sam2``: the drawn boxes or points go to the SAM 2 stage in place
  of the detector, so the text is left out (:data:`GEOMETRY_REPLACES_TEXT`);
- ``demo``: keeps the regions the boxes/points select (text optional).

The drawn geometry travels in the typed prompt's ``meta`` (``boxes``, ``points``: image
pixels), so it is shown in the Typed prompts list, sent in the SegmentRequest and part of the
prediction-cache key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QLabel, QToolBar

from masklens.gui.widgets.glyph_icon import glyph_icon
from masklens.gui.window.context import WindowPart

if TYPE_CHECKING:
    from masklens.gui.canvas.sample_view import SampleViewWidget
    from masklens.gui.prompts.prompt_bar import PromptBar
    from masklens.gui.state import AppState
    from masklens.gui.widgets.quiet_tabs import QuietTabWidget

#: backends whose detector needs text: drawn geometry replaces it and goes to their SAM 2 stage
GEOMETRY_REPLACES_TEXT = frozenset({"grounded-sam2", "owlv2-sam2"})


@dataclass
class VisualPrompt:
    """Boxes (x0, y0, x1, y1) and points (x, y, label 1/0) in pixels of one image of the sample."""

    image: str | None = None
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)
    points: list[tuple[float, float, int]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.boxes or self.points)

    def to_meta(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.boxes:
            out["boxes"] = [tuple(b) for b in self.boxes]
        if self.points:
            out["points"] = [tuple(p) for p in self.points]
        return out


def describe(meta: Mapping[str, Any]) -> str:
    """Drawn geometry of a prompt's meta in words: ``box [12,30,80,96] · +(40,50) −(10,10)``."""
    parts = [f"box [{','.join(str(round(v)) for v in b)}]" for b in meta.get("boxes") or ()]
    parts += [f"{'+' if label else '−'}({round(x)},{round(y)})" for x, y, label in meta.get("points") or ()]
    return " · ".join(parts)


class VisualPromptContext(WindowPart, Protocol):
    """What the drawing tools use of the window: the Sample tab's canvas (drawn on), the central
    tabs (Esc there), the prompt bar (Run drawn) and the state (typed prompts' drawn prompts)."""

    state: AppState
    sample_view: SampleViewWidget
    tabs: QuietTabWidget
    prompt_bar: PromptBar


class VisualPromptTool(QObject):
    """The drawing tools of a window: draws on ``window.sample_view``; the Compare tab shows each
    result's own drawn prompt (:meth:`result_marks`) and the prompt bar asks :meth:`has_prompt`."""

    changed = Signal()

    def __init__(self, window: VisualPromptContext) -> None:
        super().__init__(window.window())
        self.window = window
        self.prompt = VisualPrompt()
        self.views = [window.sample_view]
        self.toolbar = QToolBar("Prompt tools", window.window())
        self.toolbar.setObjectName("prompt-tools-toolbar")
        group = QActionGroup(self)
        self.tool_actions: dict[str, QAction] = {}
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)  # names in tooltips
        for tool, label, key, tip, glyph in (
            ("pan", "Pan", "H", "drag pans the image", ("✥", "Pan")),
            ("box", "Box", "B", "drag to draw a box prompt (SAM 3 exemplar, SAM 2 box, demo)", ("▭", "Box")),
            ("point", "Points", "P", "click a positive point; right click or Shift+click a negative one",
             ("∴", "Pt")),
        ):
            act = QAction(glyph_icon(*glyph), label, self.toolbar, checkable=True)
            act.setShortcut(key)
            act.setToolTip(f"{label} ({key}): {tip}")
            act.setChecked(tool == "pan")
            act.triggered.connect(lambda _=False, t=tool: self.set_tool(t))
            group.addAction(act)
            self.toolbar.addAction(act)
            self.tool_actions[tool] = act
        self.clear_action = QAction(glyph_icon("⌫", "Clr"), "Clear (in an edit: close the edit)", self.toolbar)
        self.clear_action.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        self.clear_action.setToolTip(
            "Clear (Esc): cancel the box being drawn, else clear the drawn prompt and go back to Pan. In "
            "Correct mode with an edit open, Esc closes the edit instead (asking Accept / Discard / "
            "Cancel when it has changes) and Correct mode stays on")
        # Esc only from the canvas area: elsewhere it keeps its usual meaning
        self.clear_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.clear_action.triggered.connect(self.cancel)
        self.toolbar.addAction(self.clear_action)
        window.tabs.addAction(self.clear_action)
        self.run_action = QAction(glyph_icon("▶", "Run"), "Run drawn", self.toolbar)
        self.run_action.setShortcut("Ctrl+Return")
        self.run_action.setToolTip("Run drawn (Ctrl+Return): run the drawn prompt (with the text, if any) on the "
                                   "selected model")
        self.run_action.triggered.connect(lambda: window.prompt_bar.request_run())
        self.toolbar.addAction(self.run_action)
        self.summary = QLabel("")
        self.toolbar.addWidget(self.summary)
        self.actions = [*self.tool_actions.values(), self.clear_action, self.run_action]
        for view in self.views:
            view.boxDrawn.connect(lambda image, box: self.add(image, box=box))
            view.pointClicked.connect(lambda image, point: self.add(image, point=point))
        window.state.sampleChanged.connect(lambda _: self.clear())
        window.state.benchmarkChanged.connect(self.clear)
        #: tool name → asked before that tool is left (False: it stays): :meth:`add_tool`
        self._may_leave: dict[str, Callable[[], bool]] = {}
        #: tool name → what Esc does first in it (True: done, no clearing): :meth:`add_tool`
        self._escape: dict[str, Callable[[], bool]] = {}

    def add_tool(self, name: str, action: QAction, *, may_leave: Callable[[], bool] | None = None,
                 escape: Callable[[], bool] | None = None) -> None:
        """Another tool (e.g. Correct) beside Pan / Box / Points: its checkable ``action`` joins
        their exclusive group, the toolbar (before Clear) and :meth:`set_tool`; ``may_leave()``
        is asked before another tool replaces it (False keeps it, e.g. an edit not let go);
        ``escape()`` is Esc in that tool, before Clear (True: Esc was used, e.g. an edit closed)."""
        self.tool_actions["pan"].actionGroup().addAction(action)
        self.toolbar.insertAction(self.clear_action, action)
        self.tool_actions[name] = action
        self.actions.append(action)
        if may_leave is not None:
            self._may_leave[name] = may_leave
        if escape is not None:
            self._escape[name] = escape

    def has_prompt(self) -> bool:
        """Whether a box or point is drawn (a drawn prompt runs without text)."""
        return bool(self.prompt)

    # ------------------------------------------------------------ editing
    @property
    def tool(self) -> str:
        return self.views[0].tool

    def set_tool(self, tool: str) -> None:
        current = self.tool
        leave = self._may_leave.get(current)
        if tool != current and leave is not None and not leave():
            self.tool_actions[current].setChecked(True)  # the button clicked goes back
            return
        self.tool_actions[tool].setChecked(True)
        for view in self.views:
            view.set_tool(tool)

    def add(self, image: str, *, box: tuple | None = None, point: tuple | None = None) -> None:
        """Add a box or point drawn on ``image`` (drawing on another image starts afresh)."""
        if image != self.prompt.image:
            self.prompt = VisualPrompt(image)
        # whole image pixels: what the label says ("box [12,30,80,96]") is what the model gets
        if box is not None:
            x0, y0, x1, y1 = (float(round(v)) for v in box)
            self.prompt.boxes.append((x0, y0, x1, y1))
        if point is not None:
            x, y, label = point
            self.prompt.points.append((float(round(x)), float(round(y)), int(label)))
        self._show()

    def clear(self) -> None:
        self.prompt = VisualPrompt()
        self._show()

    def cancel(self) -> None:
        """Esc: a box being dragged is dropped; otherwise the drawn prompt is cleared and Pan is back
        (in a tool with an Esc of its own, e.g. an edit open in Correct mode, that comes first)."""
        escape = self._escape.get(self.tool)
        if escape is not None and escape():
            return
        drawing = [p.canvas for v in self.views for p in v.panels if p.canvas._rubber is not None]
        for canvas in drawing:
            canvas.cancel_drawing()
        if not drawing:
            self.clear()
            self.set_tool("pan")

    def _show(self) -> None:
        image = self.prompt.image  # set whenever something is drawn
        marks = {image: (self.prompt.boxes, self.prompt.points)} if self.prompt and image is not None else {}
        for view in self.views:
            view.marks = marks
            view.draw_marks()
        nb, npt = len(self.prompt.boxes), len(self.prompt.points)
        self.summary.setText(f" {nb} box{'es' * (nb != 1)} · {npt} point{'s' * (npt != 1)}" if self.prompt else "")
        self.summary.setToolTip(f"drawn on {self.prompt.image}: {describe(self.prompt.to_meta())} (image pixels)"
                                if self.prompt else "")
        self.changed.emit()

    def result_marks(self, spec: Any) -> tuple[list, list] | None:
        """The boxes/points a typed-prompt result (panel ``live:N``) was run with."""
        for r in self.window.state.live:
            if spec.prompt_id == f"live:{r.id}":
                return list(r.prompt.meta.get("boxes") or []), list(r.prompt.meta.get("points") or [])
        return None

    # ------------------------------------------------------------ running
    def for_run(self, request: Any, model: str) -> tuple[Any, dict[str, Any] | None, str]:
        """The prompt-bar request adjusted for the drawn prompt: (request, meta or None, note)."""
        if not self.prompt:
            return request, None, ""
        meta = self.prompt.to_meta()
        request = replace(request, image=self.prompt.image)
        note = ""
        if model in GEOMETRY_REPLACES_TEXT and request.text:
            note = f"{model}: the drawn prompt goes to SAM 2 in place of the text “{request.text}”"
            request = replace(request, text="")
        return request, meta, note
