"""The main window: builds its parts (state, browser, views, prompt bar, readouts, jobs, settings,
features) and wires state changes to them. What it does is :mod:`~masklens.gui.window.commands`'
:class:`WindowCommands`; drawing is :mod:`~masklens.gui.window.renderer`'s :class:`Renderer`.
Features put their menu and toolbar actions in the window's named slots (:class:`WindowSlots`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QScrollArea, QVBoxLayout, QWidget

from masklens.core.errors import MasklensError
from masklens.core.models import remote
from masklens.gui.browser.sample_browser import SampleBrowser
from masklens.gui.canvas.image_cache import ImageStore
from masklens.gui.canvas.sample_view import LayerToggles, SampleViewWidget
from masklens.gui.canvas.visual_prompts import VisualPromptTool
from masklens.gui.compare.sets import SetComparison
from masklens.gui.correct.edit_check import EditCheck
from masklens.gui.correct.tool import CorrectionTool
from masklens.gui.dialogs import evaluate_dialog, report_dialog
from masklens.gui.dialogs.about import About, app_icon
from masklens.gui.gallery.tab import GalleryTab
from masklens.gui.jobs.rescoring import Rescoring
from masklens.gui.jobs.workers import JobRunner, error_message
from masklens.gui.prompts.live_list import LiveList
from masklens.gui.prompts.prompt_bar import PromptBar
from masklens.gui.review.corrected_view import CorrectedView
from masklens.gui.review.corrections_link import CorrectionsLink
from masklens.gui.review.panel import ReviewPanel
from masklens.gui.review.store_link import ReviewStoreLink
from masklens.gui.review.team import TeamView
from masklens.gui.settings import Settings
from masklens.gui.state import AppState
from masklens.gui.widgets.quiet_tabs import QuietTabWidget
from masklens.gui.window import key_scope, layout_memory, model_environment, workspace
from masklens.gui.window.commands import WindowCommands
from masklens.gui.window.dock_widths import DockWidths
from masklens.gui.window.help import HelpCommands
from masklens.gui.window.message_bar import MessageBar
from masklens.gui.window.prediction_cache import PredictionCacheAccess
from masklens.gui.window.readout_panel import ReadoutPanel
from masklens.gui.window.renderer import Renderer
from masklens.gui.window.slots import WindowSlots
from masklens.gui.window.status import StatusBar
from masklens.gui.window.view_toolbar import ViewToolbar

log = logging.getLogger(__name__)


def scrolled(widget: QWidget) -> QScrollArea:
    """``widget`` in a frameless scroll area that fits it to its width where it can (else scrolls)."""
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    area.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # a click on a button in it leaves the focus where it was
    return area


def _action(text: str, parent: QObject, slot: Callable[[], object],
            *shortcuts: QKeySequence | QKeySequence.StandardKey | str) -> QAction:
    """A plain action: ``text``, its keys (``shortcuts``, the first the primary one), ``slot`` on
    trigger."""
    action = QAction(text, parent)
    if shortcuts:
        action.setShortcuts([QKeySequence(k) for k in shortcuts])
    action.triggered.connect(slot)
    return action


class MainWindow(QMainWindow):
    # built after the lambdas that read them (the parts built first call back into these)
    renderer: Renderer
    corrected_view: CorrectedView

    def __init__(self, settings: Settings | None = None, *, settings_path: Path | None = None,
                 persist: bool = True) -> None:
        super().__init__()
        self.persist = persist  # False: never write the settings file (screenshots)
        self.setWindowTitle("masklens")
        self.setWindowIcon(app_icon())
        self.setAcceptDrops(True)
        self.settings_path = settings_path
        if settings is None:
            settings, warn = Settings.load(settings_path)
        else:
            warn = None
        self.settings = settings
        # torch models run in a process of their own (masklens.core.models.remote); a session
        # whose model runs on torch starts it now, while the window is built, not at the first
        # prompt (or, with the models in this process, imports torch now: models.preload)
        self.model_host = remote.ModelHost(model_environment.chosen_python(settings.model_python))
        self.torch_import = remote.prepare(self.model_host, settings.model)
        self.state = AppState()
        self.store = ImageStore()
        self.jobs = JobRunner(self)
        self.toggles = LayerToggles(gt_opacity=settings.gt_opacity, pred_opacity=settings.pred_opacity,
                                    outlines=settings.outlines, colours=dict(settings.colours))
        self.slots = WindowSlots()  # where features put their menu and toolbar actions
        self._docks_sized = False  # the saved dock widths are restored once, when first shown
        self._build_widgets()
        self.visual_tool = VisualPromptTool(self)  # box / point prompts drawn on the canvas
        self.prediction_caches = PredictionCacheAccess(self.message_bar)
        self.commands = WindowCommands(
            self, state=self.state, settings=settings, jobs=self.jobs, message_bar=self.message_bar,
            store=self.store, toggles=self.toggles, prompt_bar=self.prompt_bar, tabs=self.tabs,
            compare_view=self.compare_view, status=self.status, model_host=self.model_host,
            visual_tool=self.visual_tool, browser=self.browser, prediction_caches=self.prediction_caches,
            render=lambda: self.renderer.render())
        self.rescoring = Rescoring(self.state, self.browser, self, columns_key=self.columns_key)
        self.about = About(self)  # Help › About masklens
        self.help = HelpCommands(self)  # Help › Keyboard shortcuts (F1), Filter language…, Documentation
        self._build_menus()
        self._connect()
        self.set_comparison = SetComparison(self)  # prediction sets side by side
        self.tabs.addTab(self.set_comparison.tab, "Compare sets")
        self.gallery = GalleryTab(self)  # the list's rows as thumbnails
        self.tabs.addTab(self.gallery, "Gallery")
        self.renderer = Renderer(
            self, state=self.state, store=self.store, toggles=self.toggles, tabs=self.tabs,
            sample_view=self.sample_view, compare_view=self.compare_view, live_list=self.live_list,
            readout_panel=self.readout_panel, browser=self.browser, status=self.status,
            message_bar=self.message_bar, set_comparison=self.set_comparison, gallery=self.gallery)
        # a second row: the drawing tools, and beside them the Correction toolbar in Correct mode
        # (one row beside the view switches overflowed into » at 1440 px)
        self.addToolBarBreak()
        self.addToolBar(self.visual_tool.toolbar)
        self.correction = CorrectionTool(self)  # Correct mode: ground-truth edits (docs/gui.md)
        self.addToolBar(self.correction.toolbar)
        self.edit_check = EditCheck(self)  # image pairs: edit leakage, Edit difference view
        self._build_review()  # corrections: store, corrected switch, apply/export; team review
        # one-key shortcuts act only with the focus on the canvas or the sample list
        self.key_scope = key_scope.install(self, lambda: [self.tabs, self.browser.table],
                                           self.state.benchmarkChanged)
        self.resize(*layout_memory.DEFAULT_SIZE)
        self.default_state = self.saveState()  # View › Reset layout goes back to it
        layout_memory.restore_geometry(self, settings)
        if settings.window_state:
            self.restore_layout(QByteArray.fromBase64(settings.window_state.encode()))
        if warn:
            self.message_bar.show_message(warn, "warning")

    # ------------------------------------------------------------ layout
    def _build_widgets(self) -> None:
        self.message_bar = MessageBar()
        self.prompt_bar = PromptBar(has_visual=lambda: self.visual_tool.has_prompt())
        if self.model_host.external_python:  # torch models in another environment
            self.prompt_bar.refresh_models(elsewhere=True)
        self.prompt_bar.history = list(self.settings.prompt_history)
        self.prompt_bar.select_model(self.settings.model)
        self.sample_view = SampleViewWidget()
        # each typed-prompt result's panel shows the boxes / points it was run with
        self.compare_view = SampleViewWidget(marks_for=lambda spec: self.visual_tool.result_marks(spec))
        self.compare_view.empty.setText("Typed prompts appear here side by side: type a prompt above and Run.")
        self.tabs = QuietTabWidget()  # a new panel title does not repaint the whole page
        self.tabs.addTab(self.sample_view, "Sample")
        self.tabs.addTab(self.compare_view, "Compare typed prompts")
        self.tabs.tabBar().setUsesScrollButtons(True)  # a narrow window scrolls the tab titles
        central = QWidget()
        lay = QVBoxLayout(central)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.prompt_bar)
        # a row of its own, one line high and kept while empty: it never moves nor covers anything
        self.message_bar.install(lay, central, self.prompt_bar.options.sizeHint().height())
        lay.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        self.view_toolbar = ViewToolbar(self.toggles, self)
        self.addToolBar(self.view_toolbar)
        self.slots.open("toolbar.view", self.view_toolbar)  # the features' view switches
        self.browser = SampleBrowser()
        # the corrected ground truth's card shows the original record beside the corrected one
        self.readout_panel = ReadoutPanel(original_for=lambda index: self.corrected_view.original_readout(index))
        self.live_list = LiveList()
        self.review_panel = ReviewPanel()
        self.review_panel.reviewer.setText(self.settings.reviewer)  # "": the store's (login) name
        self.review_panel.reviewerChanged.connect(self._reviewer_named)
        self.browser_dock = self._dock("Samples", self.browser, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.readout_dock = self._dock("Readout", self.readout_panel, Qt.DockWidgetArea.RightDockWidgetArea)
        self.live_dock = self._dock("Typed prompts", self.live_list, Qt.DockWidgetArea.RightDockWidgetArea)
        # scrolled, not squeezed: the window's minimum size stays within a 1920×1080 screen at a
        # scale factor of 2 (960×540 logical pixels) — the Review dock's buttons set 380 px of it
        self.review_dock = self._dock("Review", scrolled(self.review_panel), Qt.DockWidgetArea.RightDockWidgetArea)
        self.tabifyDockWidget(self.live_dock, self.review_dock)
        self.dock_widths = DockWidths(self, [self.browser_dock, self.readout_dock, self.live_dock, self.review_dock])
        self.status = StatusBar(self, model_host=self.model_host)
        self.setStatusBar(self.status)
        self.view_toolbar.scope_keys(self.tabs, self.browser.table)
        self.review_link = ReviewStoreLink(self.state, self.browser, self.review_panel, self.message_bar)

    def _reviewer_named(self, name: str) -> None:
        """The Review dock's reviewer name, kept for the next start."""
        self.settings.reviewer = name

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if self._docks_sized:
            return
        self._docks_sized = True
        if self.settings.window_state:  # again once the window has its size: dock widths come back exact
            state = QByteArray.fromBase64(self.settings.window_state.encode())
            chosen = {k: v for k, v in self.settings.dock_widths.items() if isinstance(v, int)}

            def restore() -> None:
                self.restore_layout(state)
                self.dock_widths.choose(chosen)  # a window narrower than then: they come back on widening

            QTimer.singleShot(0, restore)
        else:
            QTimer.singleShot(0, lambda: layout_memory.size_docks(self))

    def restore_layout(self, state: QByteArray) -> None:
        """The docks and toolbars of a saved ``state``; the Correction toolbar is shown in Correct
        mode only (it follows the tool, not a layout saved while Correct mode was on)."""
        self.restoreState(state)
        self.correction.toolbar.setVisible(self.correction.correct_action.isChecked())

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title.lower().replace(' ', '-')}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _dialog_action(self, text: str, shortcut: str, open_dialog: Callable[[], Any]) -> QAction:
        """A menu action opening a dialog; a failure is said in the message bar, never a crash."""
        def run() -> None:
            try:
                open_dialog()
            except Exception as exc:  # noqa: BLE001 - shown, never a crash
                if not isinstance(exc, MasklensError):
                    log.exception("%s failed", text)
                self.message_bar.show_message(error_message(exc), "error")  # a bug names the log

        return _action(text, self, run, shortcut)

    def _build_menus(self) -> None:
        c, slots = self.commands, self.slots
        m = self.menuBar().addMenu("&File")
        m.addAction(_action("Open &benchmark…", self, lambda: c.open_benchmark_dialog(),
                            QKeySequence.StandardKey.Open))
        m.addAction(_action("Open &predictions…", self, c.open_predictions_dialog, "Ctrl+Shift+O"))
        self.demo_menu = m.addMenu("Open &demo")
        c.fill_demo_menu(self.demo_menu)
        m.addAction(_action("Save &workspace…", self,
                            lambda: workspace.save_workspace_dialog(self, self.state, c), "Ctrl+Shift+S"))
        m.addSeparator()
        m.addAction(self._dialog_action("Export report…", "Ctrl+Shift+E",
                                       lambda: report_dialog.open_report_dialog(self, self.state)))
        m.addSeparator()
        slots.open("file.corrections", m)  # apply / export the review store's corrections
        # Quit last, with the recent benchmarks (a submenu: nothing a slipped click triggers)
        # between it and the exports; it asks first when an edit would be lost (closeEvent)
        self.recent_menu = m.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(lambda: c.fill_recent(self.recent_menu))
        m.addSeparator()
        quit_ = _action("&Quit", self, self.close)  # the platform's key, else Ctrl+Q
        quit_.setShortcuts(QKeySequence.keyBindings(QKeySequence.StandardKey.Quit) or [QKeySequence("Ctrl+Q")])
        m.addAction(quit_)
        nav = self.menuBar().addMenu("&Navigate")
        self.nav_actions = {
            "next": _action("Next sample", self, lambda: c.step_sample(1), "PgDown", "Alt+Right"),
            "previous": _action("Previous sample", self, lambda: c.step_sample(-1), "PgUp", "Alt+Left"),
            "next_match": _action("Next failure (match of the current filter)", self, c.next_match, "F3"),
        }
        for a in self.nav_actions.values():
            nav.addAction(a)
            self.addAction(a)
        evaluate = self.menuBar().addMenu("&Evaluate")
        evaluate.addAction(self._dialog_action("Run benchmark…", "Ctrl+E",
                                               lambda: evaluate_dialog.open_evaluate_dialog(self, self.state)))
        evaluate.addAction(_action("Model &environment…", self,
                                   lambda: model_environment.open_model_environment_dialog(self)))
        view = self.menuBar().addMenu("&View")
        for d in self.findChildren(QDockWidget):
            view.addAction(d.toggleViewAction())
        view.addSeparator()
        view.addAction(_action("&Reset layout", self, lambda: layout_memory.reset_layout(self)))
        view.addAction(_action("&Colours…", self, c.open_colours_dialog))
        slots.open("view.toggles", view)  # the features' switches (e.g. the corrected ground truth)
        for a in self.review_panel.shortcut_actions():
            self.addAction(a)
        help_menu = self.menuBar().addMenu("&Help")
        slots.open("help", help_menu)
        slots.add("help", *self.help.actions)
        self.addAction(self.help.keys_action)  # F1 wherever the focus is
        slots.add_separator("help")
        slots.add("help", self.about.action)

    def _build_review(self) -> None:
        """Corrections and team review: the corrected-ground-truth switch (View menu, view
        toolbar) with its summary in the Readout dock, File › Apply corrections… and Export
        verdicts/corrections…, and the team view in the Review dock."""
        self.corrected_view = CorrectedView(self)
        self.corrections_link = CorrectionsLink(self)
        self.team = TeamView(self)
        self.team.rowsChanged.connect(self._readouts_changed)  # the browser's review.disagree column
        self.slots.add("file.corrections", self.corrections_link.apply_action, self.corrections_link.export_action)
        self.slots.add_separator("file.corrections")
        self.slots.add_separator("view.toggles")
        self.slots.add("view.toggles", self.corrected_view.action)
        self.slots.add_separator("toolbar.view")
        self.slots.add("toolbar.view", self.corrected_view.action)
        # the summary (all samples): original and corrected, in the Readout dock while the switch is on
        for w in self.readout_panel.add_summary("Benchmark summary: original / corrected ground truth",
                                                self.corrected_view.summary):
            self.corrected_view.action.toggled.connect(w.setVisible)

    def _connect(self) -> None:
        s = self.state
        s.benchmarkChanged.connect(self._benchmark_changed)
        s.sampleChanged.connect(self._sample_changed)
        s.readoutsChanged.connect(self._readouts_changed)
        s.predictionsChanged.connect(self._predictions_changed)
        s.liveChanged.connect(self._live_changed)
        self.prompt_bar.model.activated.connect(lambda _: self._model_picked())
        s.paramsShown.connect(lambda: self.renderer.render())
        s.liveChanged.connect(self.live_dock.raise_)
        self.browser.sampleActivated.connect(self.state.set_index)
        s.sampleKept.connect(self.browser.select_source_row)  # a refused switch: the row goes back
        self.browser.message.connect(lambda t: self.message_bar.show_message(t, "warning"))
        self.readout_panel.sliders.paramsChanged.connect(self.set_params)
        self.readout_panel.bind(self.state, lambda: [self.sample_view, self.compare_view])
        self.prompt_bar.runRequested.connect(self.commands.run_prompt)
        self.prompt_bar.cancelRequested.connect(self.jobs.cancel_all)
        self.prompt_bar.optionsRequested.connect(self.commands.open_model_options)
        self.view_toolbar.togglesChanged.connect(lambda: self.renderer.render())
        self.view_toolbar.activeSetChanged.connect(self.state.set_active)
        self.view_toolbar.fitRequested.connect(lambda: self.renderer.current_view().fit())
        self.view_toolbar.oneToOneRequested.connect(lambda: self.renderer.current_view().one_to_one())
        self.live_list.shownChanged.connect(self.state.set_live_shown)
        self.status.follow_jobs(self.jobs, self.prompt_bar, self.message_bar)
        self.tabs.currentChanged.connect(lambda _: self.renderer.render())

    # ------------------------------------------------------------ state → widgets
    def _benchmark_changed(self) -> None:
        kind, bench = self.state.kind, self.state.benchmark
        self.readout_panel.help = dict(kind.metric_help) if kind else {}
        self.readout_panel.sliders.set_specs(kind.params if kind else (), self.state.params)
        self.browser.set_benchmark(kind.name if kind else None, bench.samples if bench else [],
                                   dict(kind.metric_help) if kind else {})
        self.view_toolbar.set_sets([], None)
        self.live_list.set_results([])  # the previous benchmark's typed prompts are gone
        self.tabs.setCurrentWidget(self.sample_view)
        self.setWindowTitle(f"masklens — {kind.title or kind.name}: {bench.name}" if kind and bench else "masklens")
        self.review_link.attach()

    def _predictions_changed(self) -> None:
        self.view_toolbar.set_sets(list(self.state.prediction_sets), self.state.active)
        self.rescoring.settle_heap()

    def _readouts_changed(self) -> None:
        # with two or more sets ticked in "Compare sets", their columns come first; then the
        # corrected.* and review.* columns, when they apply
        rows = self.set_comparison.browser_readouts(self.state.readouts.get(self.state.active or ""))
        rows = self.team.browser_rows(self.corrected_view.browser_rows(rows))
        self.browser.set_readouts(rows, self.rescoring.prepared_for(rows), columns_key=self.columns_key())
        self.browser.select_source_row(self.state.index)  # a model reset drops the selection
        if self.rescoring.shown_is_current():  # the first frame drew this sample at these values
            self.renderer.show_status()
        else:
            self.renderer.render()

    def columns_key(self) -> Any:
        """What the list's metric columns depend on: this benchmark and set, with or without the
        corrected.* and review.* columns (a slider step keeps them); None while compared sets
        bring columns of their own. The worker re-scoring a slider step plans with the same."""
        if self.set_comparison.brings_columns:
            return None
        extra = (self.corrected_view.on, bool(self.team.pairs),
                 id(self.edit_check.measured))  # edit leakage
        return (id(self.state.benchmark), self.state.active, extra)

    def _sample_changed(self, index: int) -> None:
        self.renderer.prefetcher.input_arrived()  # the neighbours' overlays wait until the user pauses
        self.browser.select_source_row(index)
        sample = self.state.sample
        self.prompt_bar.set_sample(sample)
        self.live_list.set_results(self.state.live_for_sample())  # this sample's layers only
        self.review_link.show_sample()
        self.renderer.render(cold_later=True)  # a first visit's masks one event-loop turn after its image

    def _model_picked(self) -> None:
        """A model picked in the prompt bar that runs on torch: torch is imported now, in the
        background, not at its first prompt (masklens.core.models.preload)."""
        if self.torch_import is None:
            self.torch_import = remote.prepare(self.model_host, self.prompt_bar.model.currentData() or "")

    def _live_changed(self) -> None:
        self.live_list.set_results(self.state.live_for_sample())
        self.renderer.render(in_turns=True)  # a 100-mask result's panels over several event-loop turns

    # ------------------------------------------------------------ params
    def set_params(self, params: dict[str, float]) -> None:
        try:
            self.rescoring.request(params)  # large benchmarks: the worker pool, latest value wins
        except MasklensError as exc:  # e.g. a value outside the kind's range
            self.message_bar.show_message(str(exc), "error")
            return
        if self.state.kind is not None:
            self.settings.params[self.state.kind.name] = dict(self.state.params)

    # ------------------------------------------------------------ drag and drop
    def dragEnterEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.commands.open_benchmark_dialog(first_path=paths[0])

    # ------------------------------------------------------------ settings
    def save_settings(self) -> None:
        if not self.persist:
            return
        s = self.settings
        layout_memory.save_geometry(self, s)
        s.dock_widths = dict(self.dock_widths.wanted)
        s.gt_opacity, s.pred_opacity = self.toggles.gt_opacity, self.toggles.pred_opacity
        s.outlines, s.colours = self.toggles.outlines, dict(self.toggles.colours)
        s.model = self.prompt_bar.model.currentData() or s.model
        try:
            s.save(self.settings_path)
        except OSError as exc:
            self.message_bar.show_message(f"settings not saved: {exc}", "warning")

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        if not self.state.may_leave("quitting"):  # e.g. an unaccepted edit the user keeps
            event.ignore()
            return
        self.jobs.cancel_all()
        self.rescoring.runner.cancel_all()
        self.save_settings()
        self.commands.unload_models()
        self.model_host.stop()
        if self.state.review_store is not None:
            self.state.review_store.close()
        event.accept()
