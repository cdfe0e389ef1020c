"""Correct mode: edit a ground-truth instance on the canvas (docs/gui.md, "Correct mode").

``C`` (Prompt tools › Correct) puts the canvases in the "correct" tool; the Correction toolbar
picks what a drag or click does. The edit itself is an :class:`~.session.EditSession` at the
ground truth's full resolution; each operation re-composes only the box it changed
(:class:`~.overlay.MaskItem`). Accepting emits :attr:`CorrectionTool.accepted`
``(sample_id, gt_key, instance index or None for a new one, Mask or None for a deletion, the
tools used)``:
what the review store's corrections are made of (the store is wired to it elsewhere).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np
from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget

from masklens.gui.correct.assist import AssistPrompt, fit_to, propose
from masklens.gui.correct.category import (
    CategoryChoices,
    ask_category,
    category_ids,
    no_category_reason,
)
from masklens.gui.correct.overlay import MaskItem, brush_item, polyline_item
from masklens.gui.correct.session import EditSession
from masklens.gui.correct.toolbar import COMMANDS, CorrectionToolbar, tip
from masklens.gui.widgets.glyph_icon import glyph_icon
from masklens.gui.window.context import WindowPart

if TYPE_CHECKING:
    from masklens.gui.canvas.image_cache import ImageStore
    from masklens.gui.canvas.sample_view import SampleViewWidget
    from masklens.gui.canvas.visual_prompts import VisualPromptTool
    from masklens.gui.prompts.prompt_bar import PromptBar
    from masklens.gui.settings import Settings
    from masklens.gui.state import AppState
    from masklens.gui.widgets.quiet_tabs import QuietTabWidget
    from masklens.gui.window.commands import WindowCommands
    from masklens.gui.window.message_bar import MessageBar
    from masklens.gui.window.status import StatusBar

MIN_RADIUS, MAX_RADIUS = 1, 256
EDIT_COLOUR, PROPOSAL_COLOUR = "#F0E442", "#56B4E9"


class CorrectionContext(WindowPart, Protocol):
    """What Correct mode uses of the window: the state (sample, kind, benchmark), the Sample
    tab's canvas (edited on) and the central tabs (its keys), the drawing tools (Correct joins
    them), the image store, settings and prompt bar (model assist), the commands (the assist's
    job and models) and the message bar."""

    state: AppState
    sample_view: SampleViewWidget
    tabs: QuietTabWidget
    visual_tool: VisualPromptTool
    store: ImageStore
    settings: Settings
    prompt_bar: PromptBar
    commands: WindowCommands
    message_bar: MessageBar
    status: StatusBar


class CorrectionTool(QObject):
    """The correction tools of a window (``window.sample_view``'s panels)."""

    #: (sample_id, gt_key, instance index or None for a new one, mask or None for a deletion,
    #: the tools of the edit's operations in the order of first use)
    accepted = Signal(str, str, object, object, object)
    #: (sample_id, gt_key, instance index, new category id): a category change, mask unchanged
    recategorized = Signal(str, str, int, object)
    changed = Signal()

    def __init__(self, window: CorrectionContext) -> None:
        super().__init__(window.window())
        self.window = window
        self.view = window.sample_view
        self.toolbar = CorrectionToolbar(window.window(), window.tabs)
        self.session: EditSession | None = None
        self.panel = -1  # index of the panel the edit is drawn on
        self.image_key = ""
        self.radius = 8.0  # in mask pixels
        self.polygon: list[tuple[float, float]] = []
        self.assist = AssistPrompt()
        self.proposal: np.ndarray | None = None
        self._items: dict[str, Any] = {}
        self._painting = False
        self._drag: tuple[float, float] | None = None
        self._category_label = ""  # " · category 2 circle" for the instance edited
        self.categories = CategoryChoices()  # the benchmark's, found once (not on every brush move)
        vt = window.visual_tool  # "Correct" joins Pan / Box / Points
        act = QAction(glyph_icon("✎", "Cor"), "Correct", vt.toolbar, checkable=True)
        act.setShortcut("C")
        act.setToolTip("Correct (C): correct the ground truth — select an instance, brush, erase, polygon, "
                       "model assist (its toolbar row appears)")
        act.triggered.connect(lambda: vt.set_tool("correct"))
        act.toggled.connect(lambda on: self.toolbar.setVisible(on))  # its toolbar only in Correct mode
        # the edit's instance, area, steps and brush: in the status bar, always in view in Correct mode
        self.edit_status = QLabel("")
        self.edit_status.setObjectName("correct-edit-status")
        self.edit_status.setToolTip("the edit: ground truth and instance, its area, the undo steps, the brush size")
        self.edit_status.setVisible(False)
        window.status.addWidget(self.edit_status)
        act.toggled.connect(self.edit_status.setVisible)
        vt.add_tool("correct", act, may_leave=lambda: self.settle("leaving Correct mode"),
                    escape=self.close_edit)
        self.correct_action = act
        tb = self.toolbar
        for name, a in tb.subtools.items():
            a.triggered.connect(lambda _=False, n=name: self.set_subtool(n))
        c = tb.commands
        c["smaller"].triggered.connect(lambda: self.resize_brush(0.8))
        c["larger"].triggered.connect(lambda: self.resize_brush(1.25))
        c["close"].triggered.connect(self.close_polygon)
        c["fill"].triggered.connect(lambda: self._apply(lambda s: s.fill_holes()))
        for mode in ("add", "subtract", "replace"):
            c[mode].triggered.connect(lambda _=False, m=mode: self.use_proposal(m))
        c["new"].triggered.connect(self.new_instance)
        c["delete"].triggered.connect(self.delete_instance)
        c["category"].triggered.connect(self.change_category)
        #: how the new category is asked for (tests answer it): (parent, current, [(id, label)]) -> id or None
        self.ask_category = ask_category
        c["undo"].triggered.connect(lambda: self._apply(lambda s: s.undo()))
        c["redo"].triggered.connect(lambda: self._apply(lambda s: s.redo()))
        c["accept"].triggered.connect(self.accept)
        c["discard"].triggered.connect(lambda: self.end(say="edit discarded"))
        self.view.editMouse.connect(self._mouse)
        window.tabs.installEventFilter(self)  # Ctrl+Z / Ctrl+Shift+Z on the canvas while editing
        # another sample, benchmark, or quitting: an unaccepted edit is asked about first
        window.state.add_leave_check(self.settle)
        window.state.sampleChanged.connect(lambda _: self.end(say="edit discarded: another sample"))
        window.state.benchmarkChanged.connect(self.categories.forget)
        window.state.benchmarkChanged.connect(lambda: self.end())
        self.toolbar.setVisible(False)
        self._show()

    # ------------------------------------------------------------ state
    @property
    def subtool(self) -> str:
        return next(n for n, a in self.toolbar.subtools.items() if a.isChecked())

    def set_subtool(self, name: str) -> None:
        self.toolbar.subtools[name].setChecked(True)
        self._drop_polygon()
        if self.window.visual_tool.tool != "correct":
            self.window.visual_tool.set_tool("correct")
        self._show()

    def resize_brush(self, factor: float) -> None:
        self.radius = float(min(MAX_RADIUS, max(MIN_RADIUS, round(self.radius * factor, 1) or 1)))
        self._show()

    def _say(self, text: str, level: str = "info") -> None:
        # one topic: a confirmation (accepted, deleted) replaces a warning about the edit
        self.window.message_bar.show_message(text, level, topic="correction")

    def _show(self) -> None:
        s = self.session
        what = "no instance selected" if s is None else (
            f"{s.gt_key} {'new instance' if s.instance is None else f'instance {s.instance + 1}'}"
            f"{self._category_label} · {s.area} px · {len(s.undo_stack)} step{'s' * (len(s.undo_stack) != 1)}")
        self.edit_status.setText(f"Correct: {what} · brush {self.radius:g} px"
                                 + (" · proposal ready" if self.proposal is not None else ""))
        editing = s is not None
        c = self.toolbar.commands
        for name in ("fill", "accept", "discard", "new", "delete"):
            c[name].setEnabled(editing or name == "new")
        c["undo"].setEnabled(s is not None and bool(s.undo_stack))
        c["redo"].setEnabled(s is not None and bool(s.redo_stack))
        for name in ("add", "subtract", "replace"):
            c[name].setEnabled(editing and self.proposal is not None)
        why = self._no_category_why()
        c["category"].setEnabled(not why)
        label, key, what_it_does = COMMANDS["category"]
        c["category"].setToolTip(tip(label, key, what_it_does) + (f": unavailable, {why}" if why else ""))
        self.changed.emit()

    def _canvas(self, panel: int | None = None) -> Any:
        panels = self.view.panels
        i = self.panel if panel is None else panel
        return panels[i].canvas if 0 <= i < len(panels) else None

    def _scale(self, panel: int) -> tuple[float, float]:
        """Mask pixels per image pixel (x, y) on ``panel``."""
        canvas, s = self._canvas(panel), self.session
        w, h = canvas.image_size() if canvas is not None else (0, 0)
        return (s.shape[1] / w, s.shape[0] / h) if s is not None and w and h else (1.0, 1.0)

    # ------------------------------------------------------------ starting / ending
    def start(self, panel: int, gt_key: str, instance: int | None) -> bool:
        """Edit instance ``instance`` (None: a new one) of ground truth ``gt_key`` on ``panel``."""
        sample = self.window.state.sample
        if sample is None or gt_key not in sample.gts or panel >= len(self.view.specs):
            return False
        if self.session is not None and self.session.changed:
            self._say("accept (Shift+Enter) or discard the current edit first", "warning")
            return False
        self.end()
        gt = sample.gts[gt_key]
        mask = (gt.masks[instance].to_array().astype(bool) if instance is not None
                else np.zeros((gt.height, gt.width), bool))
        self.session = EditSession(mask, sample_id=sample.id, gt_key=gt_key, instance=instance)
        cats = category_ids(gt) if instance is not None else []
        self._category_label = (f" · category {self.categories.label(self.window.state.benchmark, cats[instance])}"
                                if cats and instance is not None else "")
        self.panel, self.image_key = panel, self.view.specs[panel].image
        canvas = self._canvas()
        item = MaskItem(self.session.mask, canvas.image_size(), EDIT_COLOUR, 0.5, original=self.session.original)
        canvas.scene().addItem(item)
        self._items["edit"] = item
        self._show()
        return True

    def unaccepted(self) -> bool:
        """Whether an edit with changes (or a polygon being clicked) is open."""
        return self.session is not None and (self.session.changed or bool(self.polygon))

    def settle(self, what: str) -> bool:
        """Before ``what`` ("moving to another sample", "quitting", "leaving Correct mode" …)
        would close an unaccepted edit: Accept / Discard / Cancel is asked. True: go on (the edit
        was accepted, discarded, or had nothing to lose); False: stay with the edit."""
        s = self.session
        if s is None or not self.unaccepted():
            return True
        where = "a new instance" if s.instance is None else f"instance {s.instance + 1}"
        edit = f"{s.gt_key} {where} ({s.area} px, {len(s.undo_stack)} step{'s' * (len(s.undo_stack) != 1)})"
        answer = ask_unaccepted(self.window.window(), edit, what)
        if answer == "accept":
            self.accept()
            return True
        if answer == "discard":
            self.end()
            self._say(f"edit discarded: {edit}")
            return True
        return False

    def close_edit(self) -> bool:
        """Esc with an edit open: close it — at once when nothing changed, else after Accept /
        Discard / Cancel; Correct mode stays on. False when no edit is open (Esc is Clear)."""
        if self.session is None:
            return False
        if self.settle("closing it"):
            self.end()
        return True

    def end(self, say: str = "") -> None:
        """Close the edit (nothing emitted) and remove its overlays."""
        had = self.session is not None and self.session.changed
        self._drop_polygon()
        self._set_proposal(None)
        for key in list(self._items):
            item = self._items.pop(key)
            if item.scene() is not None:
                item.scene().removeItem(item)
        self.session, self.panel, self.assist = None, -1, AssistPrompt()
        if say and had:  # work was dropped: a warning, which stays until dismissed
            self._say(say, "warning")
        self._show()

    def accept(self) -> None:
        s = self.session
        if s is None:
            return
        s.end_stroke()
        if not s.changed and s.instance is not None:
            self.end()
            self._say("nothing changed: no correction recorded")
            return
        mask = s.to_mask()
        sample_id, gt_key, instance, tools = s.sample_id, s.gt_key, s.instance, s.tools
        self.end()
        self.accepted.emit(sample_id, gt_key, instance, mask, tools)
        where = "new instance" if instance is None else f"instance {instance + 1}"
        self._say(f"correction accepted: {gt_key} {where} of {sample_id} ({mask.area} px)")

    def new_instance(self) -> None:
        panel = self.panel if self.session is not None else self._first_panel_with_gt()
        if panel is None:
            self._say("no ground truth on this view to add an instance to", "warning")
            return
        self.start(panel, self.view.specs[panel].gts[0], None)

    def delete_instance(self) -> None:
        s = self.session
        if s is None:
            return
        if s.instance is None:
            self.end(say="new instance discarded")
            return
        sample_id, gt_key, instance = s.sample_id, s.gt_key, s.instance
        self.end()  # quietly: the deletion is the decision
        self.accepted.emit(sample_id, gt_key, instance, None, ["delete"])
        self._say(f"deletion accepted: {gt_key} instance {instance + 1} of {sample_id}")

    def _first_panel_with_gt(self) -> int | None:
        return next((i for i, spec in enumerate(self.view.specs) if spec.gts), None)

    # ------------------------------------------------------------ operations
    def _apply(self, op: Any) -> Any:
        """Run ``op(session)``; re-compose the box it changed."""
        if self.session is None:
            return None
        box = op(self.session)
        if box is not None and "edit" in self._items:
            self._items["edit"].refresh(box)
        self._show()
        return box

    def select_at(self, panel: int, x: float, y: float) -> bool:
        """Start editing the smallest ground-truth instance under (x, y) (image pixels) on ``panel``."""
        sample = self.window.state.sample
        spec = self.view.specs[panel] if panel < len(self.view.specs) else None
        if sample is None or spec is None or not spec.gts or spec.gts[0] not in sample.gts:
            self._say("this panel shows no ground truth to correct", "warning")
            return False
        gt = sample.gts[spec.gts[0]]
        w, h = self._canvas(panel).image_size()
        mx, my = int(x * gt.width / max(w, 1)), int(y * gt.height / max(h, 1))
        mx, my = min(mx, gt.width - 1), min(my, gt.height - 1)
        hits = [(m.area, k) for k, m in enumerate(gt.masks) if m.to_array()[my, mx]]
        if not hits:
            self._say("no ground-truth instance here: New instance (Shift+N) starts one", "warning")
            return False
        return self.start(panel, spec.gts[0], min(hits)[1])

    def _mouse(self, panel: int, phase: str, x: float, y: float, alternate: int) -> None:
        tool = self.subtool
        self._brush_outline(panel, x, y, tool in ("brush", "erase") and self.session is not None)
        if tool == "select":
            if phase == "press":
                self.select_at(panel, x, y)
            return
        if self.session is None:
            if phase == "press":
                self._say("select an instance first (Select, V) or start a new one (Shift+N)", "warning")
            return
        if panel != self.panel and phase == "press":
            self._say("the edit is on another panel: draw there, or accept/discard it first", "warning")
            return
        sx, sy = self._scale(self.panel)
        mx, my = x * sx, y * sy
        if tool in ("brush", "erase"):
            if phase == "press":
                self._painting = True
                erase = tool == "erase" or bool(alternate)
                self._apply(lambda s: s.begin_stroke(mx, my, self.radius, erase=erase))
            elif phase == "move" and self._painting:
                self._apply(lambda s: s.stroke_to(mx, my))
            elif phase == "release" and self._painting:
                self._painting = False
                self._apply(lambda s: (s.stroke_to(mx, my), s.end_stroke())[1])
        elif tool == "polygon" and phase == "press":
            self.polygon.append((x, y))
            self._draw_polygon()
        elif tool == "model":
            self._model_mouse(phase, x, y, alternate)

    def _brush_outline(self, panel: int, x: float, y: float, show: bool) -> None:
        """A circle of the brush's size under the mouse (image coordinates)."""
        item = self._items.get("brush")
        if not show or panel != self.panel:
            if item is not None:
                item.setVisible(False)
            return
        if item is None:
            item = self._items["brush"] = brush_item()
            self._canvas().scene().addItem(item)
        sx, sy = self._scale(self.panel)
        rx, ry = self.radius / sx, self.radius / sy
        item.setRect(x - rx, y - ry, 2 * rx, 2 * ry)
        item.setVisible(True)

    # ------------------------------------------------------------ polygon
    def _draw_polygon(self) -> None:
        old = self._items.pop("polygon", None)
        if old is not None and old.scene() is not None:
            old.scene().removeItem(old)
        canvas = self._canvas()
        if self.polygon and canvas is not None:
            item = polyline_item(self.polygon)
            canvas.scene().addItem(item)
            self._items["polygon"] = item

    def _drop_polygon(self) -> None:
        self.polygon = []
        self._draw_polygon()

    def close_polygon(self) -> None:
        """Enter: fill the polygon clicked so far (Shift or right click on the first point: erase)."""
        pts, self.polygon = self.polygon, []
        self._draw_polygon()
        if len(pts) < 3 or self.session is None:
            return
        sx, sy = self._scale(self.panel)
        self._apply(lambda s: s.polygon([(x * sx, y * sy) for x, y in pts]))

    # ------------------------------------------------------------ model assist
    def _model_mouse(self, phase: str, x: float, y: float, alternate: int) -> None:
        if phase == "press":
            self._drag = (x, y)
            return
        if phase != "release" or self._drag is None:
            return
        (x0, y0), self._drag = self._drag, None
        if abs(x - x0) >= 3 and abs(y - y0) >= 3:  # a drag: the box (replaces the previous one)
            self.assist = AssistPrompt(box=(min(x0, x), min(y0, y), max(x0, x), max(y0, y)))
        else:  # a click: one more point
            self.assist.points.append((round(x, 1), round(y, 1), 0 if alternate else 1))
        self.request_proposal()

    def request_proposal(self, *, sync: bool = False) -> bool:
        """Send the clicks/box to the model chosen in the prompt bar."""
        w, sample = self.window, self.window.state.sample
        if self.session is None or sample is None or not self.assist:
            return False
        model = w.prompt_bar.model.currentData() or "demo"  # the model chosen in the prompt bar
        rgb = w.store.rgb_for_model(sample.images[self.image_key])
        options = dict(w.settings.model_options.get(model, {}))
        session = self.session

        def done(got: tuple[np.ndarray | None, float | None]) -> None:
            if self.session is not session:  # the edit ended meanwhile
                return
            mask, score = got
            if mask is None:
                self._set_proposal(None)
                self._say(f"{model} proposed nothing for these clicks", "warning")
                return
            proposal = fit_to(mask, session.shape)
            self._set_proposal(proposal)
            self._say(f"{model} proposal ({int(proposal.sum())} px, score {score:.2f}): "
                      "Shift+A adds, Shift+S subtracts, Shift+R replaces")

        return w.commands.start(f"propose {model}", propose, w.commands.models, model, options, rgb, self.assist,
                       on_done=done, sync=sync)

    def _set_proposal(self, mask: np.ndarray | None) -> None:
        self.proposal = mask
        old = self._items.pop("proposal", None)
        if old is not None and old.scene() is not None:
            old.scene().removeItem(old)
        canvas = self._canvas()
        if mask is not None and canvas is not None:
            item = MaskItem(mask, canvas.image_size(), PROPOSAL_COLOUR, 0.35, z=55)
            canvas.scene().addItem(item)
            self._items["proposal"] = item
        self._show()

    def use_proposal(self, mode: str) -> None:
        if self.session is None or self.proposal is None:
            return
        proposal = self.proposal
        self._apply(lambda s: s.combine(proposal, mode))
        self.assist = AssistPrompt()
        self._set_proposal(None)

    # ------------------------------------------------------------ undo keys
    # ------------------------------------------------------------ category
    def _no_category_why(self) -> str:
        """Why Change category is unavailable now ("" when it is available)."""
        sample = self.window.state.sample
        choices = self.category_choices() if sample is not None and self.session is not None else None
        return no_category_reason(self.session, sample, self.window.state.kind, choices)

    def category_choices(self) -> list[tuple[Any, str]]:
        """The benchmark's categories as (id, label) (:func:`~.category.benchmark_categories`, found
        once per benchmark)."""
        return self.categories.of(self.window.state.benchmark)

    def change_category(self) -> None:
        """Shift+C: ask for another category of the instance edited; recorded at once, mask unchanged."""
        why = self._no_category_why()
        if why:
            self._say(f"Change category: {why}", "warning")
            return
        s, sample = self.session, self.window.state.sample
        # available (no reason given): an instance of a loaded ground truth is being edited
        assert s is not None and s.instance is not None and sample is not None
        current = category_ids(sample.gts[s.gt_key])[s.instance]
        chosen = self.ask_category(self.window.window(), current, self.category_choices())
        if chosen is None or chosen == current:
            self._say(f"category unchanged ({self.categories.label(self.window.state.benchmark, current)}): "
                      "nothing recorded")
            return
        sample_id, gt_key, instance = s.sample_id, s.gt_key, s.instance
        self.end()
        self.recategorized.emit(sample_id, gt_key, instance, chosen)
        self._say(f"category change accepted: {gt_key} instance {instance + 1} of {sample_id}: "
                  f"{current} → {chosen}")

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        """While editing, Ctrl+Z / Ctrl+Shift+Z on the canvas undo/redo strokes (claimed before
        the window's Ctrl+Z, "Undo last verdict", as a text field claims its own undo keys)."""
        kind = event.type()
        if self.session is None or kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            return False
        key_event = cast(QKeyEvent, event)  # a ShortcutOverride or KeyPress event is a key event
        redo = key_event.matches(QKeySequence.StandardKey.Redo) or _is(key_event, "Ctrl+Shift+Z")
        undo = not redo and key_event.matches(QKeySequence.StandardKey.Undo)
        if not (undo or redo):
            return False
        event.accept()
        if kind == QEvent.Type.KeyPress:
            self.toolbar.commands["redo" if redo else "undo"].trigger()
        return True


def ask_unaccepted(parent: QWidget, edit: str, what: str) -> str:
    """Accept / Discard / Cancel for an unaccepted edit before ``what``: "accept", "discard" or
    "cancel" (Enter accepts, Esc cancels)."""
    box = QMessageBox(QMessageBox.Icon.Question, "Unaccepted edit",
                      f"The edit of {edit} is not accepted.", parent=parent)
    box.setObjectName("unaccepted-edit")
    box.setInformativeText(f"Accept it before {what}, discard it, or cancel and go on editing.")
    accept = box.addButton("Accept edit", QMessageBox.ButtonRole.AcceptRole)
    discard = box.addButton("Discard edit", QMessageBox.ButtonRole.DestructiveRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(accept)
    box.setEscapeButton(cancel)
    box.exec()
    clicked = box.clickedButton()
    return "accept" if clicked is accept else "discard" if clicked is discard else "cancel"


def _is(event: QKeyEvent, text: str) -> bool:
    return QKeySequence(event.keyCombination()) == QKeySequence(text)
