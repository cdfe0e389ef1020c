"""The main window: composes the parts (state, browser, views, prompt bar, readouts, jobs,
settings) and wires state changes to them; drawing is :mod:`masklens.gui.window.render`."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QVBoxLayout, QWidget

from masklens.core.errors import MasklensError
from masklens.core.models import remote
from masklens.gui.browser.sample_browser import SampleBrowser
from masklens.gui.canvas.image_cache import ImageStore
from masklens.gui.canvas.sample_view import LayerToggles, SampleViewWidget
from masklens.gui.canvas.visual_prompts import VisualPromptTool
from masklens.gui.compare.sets import SetComparison
from masklens.gui.dialogs import about
from masklens.gui.gallery import tab as gallery
from masklens.gui.jobs.rescoring import Rescoring
from masklens.gui.jobs.workers import JobRunner
from masklens.gui.prompts.live_list import LiveList
from masklens.gui.prompts.prompt_bar import PromptBar
from masklens.gui.settings import Settings
from masklens.gui.state import AppState
from masklens.gui.widgets.quiet_tabs import QuietTabWidget
from masklens.gui.window import help as help_
from masklens.gui.window import integrations, key_scope, layout_memory
from masklens.gui.window.actions import WindowActions
from masklens.gui.window.dock_widths import DockWidths
from masklens.gui.window.message_bar import MessageBar
from masklens.gui.window.readout_panel import ReadoutPanel
from masklens.gui.window.render import WindowRendering
from masklens.gui.window.status import StatusBar
from masklens.gui.window.view_toolbar import ViewToolbar

log = logging.getLogger(__name__)




class MainWindow(WindowActions, WindowRendering, QMainWindow):
    def __init__(self, settings: Settings | None = None, *, settings_path: Path | None = None,
                 persist: bool = True) -> None:
        super().__init__()
        self.persist = persist  # False: never write the settings file (screenshots)
        self.setWindowTitle("masklens")
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
        self.model_host = remote.ModelHost()
        self.torch_import = remote.prepare(self.model_host, settings.model)
        self.state = AppState()
        self.store = ImageStore()
        self.jobs = JobRunner(self)
        self.toggles = LayerToggles(gt_opacity=settings.gt_opacity, pred_opacity=settings.pred_opacity,
                                    outlines=settings.outlines, colours=dict(settings.colours))
        self._build_widgets()
        self.rescoring = Rescoring(self.state, self.browser, self)
        self.rescoring.columns_key = self.columns_key
        self._build_menus()
        self._connect()
        self.set_comparison = SetComparison(self)  # the "Compare sets" tab
        self.gallery = gallery.install(self)  # the "Gallery" tab: the list's rows as thumbnails
        self.visual_tool = VisualPromptTool(self)  # box / point prompts drawn on the canvas
        self.addToolBar(self.visual_tool.toolbar)
        from masklens.gui.correct.tool import CorrectionTool

        self.correction = CorrectionTool(self)  # Correct mode: ground-truth edits (docs/gui.md)
        self.addToolBarBreak()  # a row of its own, shown in Correct mode only
        self.addToolBar(self.correction.toolbar)
        from masklens.gui.correct.edit_check import EditCheck

        self.edit_check = EditCheck(self)  # image pairs: edit leakage, Edit difference view
        from masklens.gui.review import window_wiring

        window_wiring.install(self)  # corrections: store, corrected switch, apply/export; team review
        # one-key shortcuts act only with the focus on the canvas or the sample list
        self.key_scope = key_scope.install(self, lambda: [self.tabs, self.browser.table])
        self.resize(*layout_memory.DEFAULT_SIZE)
        self.default_state = self.saveState()  # View › Reset layout goes back to it
        layout_memory.restore_geometry(self, settings)
        if settings.window_state:
            self.restoreState(QByteArray.fromBase64(settings.window_state.encode()))
        if warn:
            self.message_bar.show_message(warn, "warning")

    # ------------------------------------------------------------ layout
    def _build_widgets(self) -> None:
        self.message_bar = MessageBar()
        self.prompt_bar = PromptBar()
        self.prompt_bar.history = list(self.settings.prompt_history)
        self.prompt_bar.select_model(self.settings.model)
        self.sample_view = SampleViewWidget()
        self.compare_view = SampleViewWidget()
        self.compare_view.empty.setText("Typed prompts appear here side by side: type a prompt above and Run.")
        self.tabs = QuietTabWidget()  # a new panel title does not repaint the whole page
        self.tabs.addTab(self.sample_view, "Sample")
        self.tabs.addTab(self.compare_view, "Compare typed prompts")
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
        self.browser = SampleBrowser()
        self.readout_panel = ReadoutPanel()
        self.live_list = LiveList()
        self.browser_dock = self._dock("Samples", self.browser, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.readout_dock = self._dock("Readout", self.readout_panel, Qt.DockWidgetArea.RightDockWidgetArea)
        self.live_dock = self._dock("Typed prompts", self.live_list, Qt.DockWidgetArea.RightDockWidgetArea)
        self.review_panel = integrations.review_panel(self)
        if self.review_panel is not None:
            self.review_dock = self._dock("Review", self.review_panel, Qt.DockWidgetArea.RightDockWidgetArea)
            self.tabifyDockWidget(self.live_dock, self.review_dock)
        self.dock_widths = DockWidths(self, [d for d in (self.browser_dock, self.readout_dock, self.live_dock,
                                                         getattr(self, "review_dock", None)) if d is not None])
        self.status = StatusBar(self)
        self.status.model_host = self.model_host
        self.setStatusBar(self.status)
        self.view_toolbar.scope_keys(self.tabs, self.browser.table)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not getattr(self, "_docks_sized", False) and self.settings.window_state:
            self._docks_sized = True  # again once the window has its size: dock widths come back exact
            state = QByteArray.fromBase64(self.settings.window_state.encode())
            QTimer.singleShot(0, lambda: self.restoreState(state))
        if not getattr(self, "_docks_sized", False) and not self.settings.window_state:
            self._docks_sized = True
            QTimer.singleShot(0, lambda: layout_memory.size_docks(self))

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title.lower().replace(' ', '-')}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_menus(self) -> None:
        m = self.menuBar().addMenu("&File")
        m.addAction(QAction("Open &benchmark…", self, shortcut=QKeySequence.StandardKey.Open,
                            triggered=lambda: self.open_benchmark_dialog()))
        m.addAction(QAction("Open &predictions…", self, shortcut="Ctrl+Shift+O",
                            triggered=self.open_predictions_dialog))
        self.demo_menu = m.addMenu("Open &demo")
        self._fill_demo_menu()
        self.recent_menu = m.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        report = integrations.report_action(self)
        if report is not None:
            m.addSeparator()
            m.addAction(report)
        m.addSeparator()
        quit_ = QAction("&Quit", self, triggered=self.close)  # the platform's key, else Ctrl+Q
        quit_.setShortcuts(QKeySequence.keyBindings(QKeySequence.StandardKey.Quit) or [QKeySequence("Ctrl+Q")])
        m.addAction(quit_)
        nav = self.menuBar().addMenu("&Navigate")
        self.nav_actions = {
            "next": QAction("Next sample", self, shortcuts=[QKeySequence("PgDown"), QKeySequence("Alt+Right")],
                            triggered=lambda: self.step_sample(1)),
            "previous": QAction("Previous sample", self, shortcuts=[QKeySequence("PgUp"), QKeySequence("Alt+Left")],
                                triggered=lambda: self.step_sample(-1)),
            "next_match": QAction("Next failure (match of the current filter)", self, shortcut="F3",
                                  triggered=self.next_match),
        }
        for a in self.nav_actions.values():
            nav.addAction(a)
            self.addAction(a)
        ev = integrations.evaluate_action(self)
        if ev is not None:
            self.menuBar().addMenu("&Evaluate").addAction(ev)
        view = self.menuBar().addMenu("&View")
        for d in self.findChildren(QDockWidget):
            view.addAction(d.toggleViewAction())
        view.addSeparator()
        view.addAction(QAction("&Reset layout", self, triggered=lambda: layout_memory.reset_layout(self)))
        view.addAction(QAction("&Colours…", self, triggered=self.open_colours_dialog))
        if self.review_panel is not None:
            for a in integrations.review_shortcuts(self.review_panel):
                self.addAction(a)
        about.install(self)  # Help › About masklens, the window icon
        help_.install(self)  # Help › Keyboard shortcuts (F1), Filter language…, Documentation

    def _connect(self) -> None:
        s = self.state
        s.benchmarkChanged.connect(self._benchmark_changed)
        s.sampleChanged.connect(self._sample_changed)
        s.readoutsChanged.connect(self._readouts_changed)
        s.predictionsChanged.connect(self._predictions_changed)
        s.liveChanged.connect(self._live_changed)
        self.prompt_bar.model.activated.connect(lambda _: self._model_picked())
        s.paramsShown.connect(self.render)
        s.liveChanged.connect(self.live_dock.raise_)
        self.browser.sampleActivated.connect(self.state.set_index)
        self.browser.message.connect(lambda t: self.message_bar.show_message(t, "warning"))
        self.readout_panel.sliders.paramsChanged.connect(self.set_params)
        self.readout_panel.bind(self.state, lambda: [self.sample_view, self.compare_view])
        self.prompt_bar.runRequested.connect(self.run_prompt)
        self.prompt_bar.cancelRequested.connect(self.jobs.cancel_all)
        self.prompt_bar.optionsRequested.connect(self.open_model_options)
        self.view_toolbar.togglesChanged.connect(self.render)
        self.view_toolbar.activeSetChanged.connect(self.state.set_active)
        self.view_toolbar.fitRequested.connect(lambda: self._current_view().fit())
        self.view_toolbar.oneToOneRequested.connect(lambda: self._current_view().one_to_one())
        self.live_list.changed.connect(self._live_changed)
        self.status.follow_jobs(self.jobs, self.prompt_bar, self.message_bar)
        self.tabs.currentChanged.connect(lambda _: self.render())

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
        integrations.attach_review_store(self)

    def _predictions_changed(self) -> None:
        self.view_toolbar.set_sets(list(self.state.prediction_sets), self.state.active)
        self.rescoring.settle_heap()

    def _readouts_changed(self) -> None:
        # with two or more sets ticked in "Compare sets", their columns come first
        rows = self.set_comparison.browser_readouts(self.state.readouts.get(self.state.active or ""))
        if getattr(self, "corrected_view", None) is not None:  # corrected.* and review.* columns
            from masklens.gui.review.window_wiring import browser_rows

            rows = browser_rows(self, rows)
        self.browser.set_readouts(rows, self.rescoring.prepared_for(rows), columns_key=self.columns_key())
        self.browser.select_source_row(self.state.index)  # a model reset drops the selection
        if self.rescoring.shown_is_current():  # the first frame drew this sample at these values
            self.show_status()
        else:
            self.render()

    def columns_key(self) -> Any:
        """What the list's metric columns depend on: this benchmark and set, with or without the
        corrected.* and review.* columns (a slider step keeps them); None while compared sets
        bring columns of their own. The worker re-scoring a slider step plans with the same."""
        extra = (getattr(getattr(self, "corrected_view", None), "on", False),
                 bool(getattr(getattr(self, "team", None), "pairs", None)),
                 id(getattr(getattr(self, "edit_check", None), "measured", None)))  # edit leakage
        return (None if getattr(self.set_comparison, "_augmented", False)
                else (id(self.state.benchmark), self.state.active, extra))

    def _sample_changed(self, index: int) -> None:
        self.prefetcher.input_arrived()  # the neighbours' overlays wait until the user pauses
        self.browser.select_source_row(index)
        sample = self.state.sample
        self.prompt_bar.set_sample(sample)
        self.live_list.set_results(self.state.live_for_sample())  # this sample's layers only
        if self.review_panel is not None and sample is not None and self.state.benchmark is not None:
            integrations.review_set_sample(self)
        self.render(cold_later=True)  # a first visit's masks one event-loop turn after its image

    def _model_picked(self) -> None:
        """A model picked in the prompt bar that runs on torch: torch is imported now, in the
        background, not at its first prompt (masklens.core.models.preload)."""
        if self.torch_import is None:
            self.torch_import = remote.prepare(self.model_host, self.prompt_bar.model.currentData() or "")

    def _live_changed(self) -> None:
        self.live_list.set_results(self.state.live_for_sample())
        self.render(in_turns=True)  # a 100-mask result's panels over several event-loop turns

    # ------------------------------------------------------------ params
    def set_params(self, params: dict[str, float]) -> None:
        try:
            self.rescoring.request(params)  # large benchmarks: the worker pool, latest value wins
        except MasklensError as exc:  # e.g. a value outside the kind's range
            self.message_bar.show_message(str(exc), "error")
            return
        if self.state.kind is not None:
            self.settings.params[self.state.kind.name] = dict(self.state.params)
