"""The main window's commands: opening benchmarks and predictions, typed prompts, model options,
colours, navigation and the window's jobs. An object the window owns, built with the widgets and
state it acts on; the layout and the signal wiring are main_window.py's."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialog, QMenu, QTabWidget, QWidget

from masklens.core.errors import Cancelled, MasklensError
from masklens.core.models import remote
from masklens.core.scoring.contract import PredictionsAhead, get_kind
from masklens.gui.browser.sample_browser import SampleBrowser
from masklens.gui.canvas.image_cache import ImageStore
from masklens.gui.canvas.sample_view import LayerToggles, SampleViewWidget
from masklens.gui.canvas.visual_prompts import VisualPromptTool
from masklens.gui.dialogs.open_dialog import (
    OpenDialog,
    file_actions,
    has_predictions,
    is_prediction_arg,
    kind_parser,
    parse_kind_args,
)
from masklens.gui.jobs.workers import JobRunner, error_message
from masklens.gui.prompts.prompt_bar import PromptBar
from masklens.gui.settings import Settings
from masklens.gui.state import AppState
from masklens.gui.window.message_bar import MessageBar
from masklens.gui.window.prediction_cache import PredictionCacheAccess
from masklens.gui.window.status import StatusBar, weights_missing_message


def recent_label(kind_name: str, argv: list[str]) -> str:
    """A recent benchmark named by its folder and kind, e.g. "cgebench-val (CGEBench)": the file
    names of one format are all alike (ann.json), their folders are not."""
    try:
        title = get_kind(kind_name).title or kind_name
    except (ImportError, MasklensError):
        title = kind_name
    paths = [Path(a) for a in argv if not a.startswith("-")]
    if not paths:
        return title
    first = paths[0]
    folder = first.parent.name if first.suffix else first.name
    return f"{folder or first.name} — {first.name} ({title})"


class _SyncContext:
    def progress(self, done: int, total: int, text: str = "") -> None:
        pass

    def check(self) -> None:
        pass


class WindowCommands:
    """What the window's menus, keys, prompt bar and features ask it to do. ``parent`` is the
    window (the dialogs' parent); ``render`` redraws what the window shows."""

    def __init__(self, parent: QWidget, *, state: AppState, settings: Settings, jobs: JobRunner,
                 message_bar: MessageBar, store: ImageStore, toggles: LayerToggles, prompt_bar: PromptBar,
                 tabs: QTabWidget, compare_view: SampleViewWidget, status: StatusBar,
                 model_host: remote.ModelHost, visual_tool: VisualPromptTool, browser: SampleBrowser,
                 prediction_caches: PredictionCacheAccess, render: Callable[[], None]) -> None:
        self.parent = parent
        self.state = state
        self.settings = settings
        self.jobs = jobs
        self.message_bar = message_bar
        self.store = store
        self.toggles = toggles
        self.prompt_bar = prompt_bar
        self.tabs = tabs
        self.compare_view = compare_view
        self.status = status
        self.model_host = model_host
        self.visual_tool = visual_tool
        self.browser = browser
        self.prediction_caches = prediction_caches
        self.render = render
        self._models: Any = None
        self._serial = 0  # typed prompt runs, numbered

    # ------------------------------------------------------------ jobs
    def start(self, name: str, func: Any, *args: Any, on_done: Any = None, sync: bool = False,
              on_error: Any = None) -> bool:
        """Run ``func(ctx, *args)`` on the pool (or inline when ``sync``, e.g. for --screenshot);
        a failure is said in the message bar and handed to ``on_error`` (its message)."""
        if not sync:
            self.jobs.run(name, func, *args, on_done=on_done, on_error=on_error)
            return True
        try:
            value = func(_SyncContext(), *args)
            if on_done is not None:
                on_done(value)
            return True
        except Cancelled:
            return False
        except Exception as exc:  # noqa: BLE001 - shown, never a crash
            self.message_bar.show_message(f"{name}: {error_message(exc)}", "error")
            if on_error is not None:
                on_error(error_message(exc))
            return False

    # ------------------------------------------------------------ opening
    def open_benchmark_dialog(self, kind: str | None = None, first_path: str | None = None, *,
                              values: dict[str, str] | None = None, problem: str = "") -> bool:
        """File › Open benchmark…. A benchmark that fails to load (a truncated JSON, a record that
        points nowhere) brings the dialog back with the problem in it and every field as it was."""
        dlg = OpenDialog(self.parent, kind=kind or (self.state.kind.name if self.state.kind else None))
        if first_path:
            required = [a for a in file_actions(kind_parser(dlg.kind())) if a.required]
            if required:
                dlg.set_value(required[0].dest, first_path)
        for dest, text in (values or {}).items():
            dlg.set_value(dest, text)
        if problem:
            dlg.error.setText(problem)
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return False
        kind_name, kept = dlg.kinds.currentData(), dlg.values()

        def failed(message: str) -> None:
            QTimer.singleShot(0, lambda: self.open_benchmark_dialog(
                kind_name, values=kept, problem=f"not opened: {message}"))

        return self.open_benchmark(kind_name, dlg.result_argv(), on_error=failed)

    def open_benchmark(self, kind_name: str, argv: list[str], *, sync: bool = False, on_error: Any = None,
                       on_loaded: Callable[[], None] | None = None) -> bool:
        """Open ``kind_name`` with its CLI arguments; errors go to the message bar (and ``on_error``).
        ``on_loaded`` is called once this benchmark is shown (before its own predictions are
        attached); never when it is not (refused, failed, cancelled, or the sample shown kept)."""
        if not self.state.may_leave("opening another benchmark"):  # e.g. an unaccepted edit kept
            return False
        try:
            kind = get_kind(kind_name)
            ns = parse_kind_args(kind, argv)
        except (MasklensError, ImportError) as exc:
            self.message_bar.show_message(f"cannot open {kind_name}: {exc}", "error")
            if on_error is not None:
                on_error(str(exc))
            return False
        from masklens.gui.jobs import tasks

        def loaded(res: tasks.Loaded) -> None:
            ahead, res.predictions_ahead = res.predictions_ahead, None
            try:
                if not self._loaded(res):
                    return
                if on_loaded is not None:
                    on_loaded()
                if has_predictions(kind, ns):
                    name = Path(str(next(iter(self._pred_values(kind, ns).values()), "predictions"))).name
                    self.attach_predictions(ns, name, sync=sync, ahead=ahead)
                    ahead = None  # the scoring job's
            finally:
                if ahead is not None:
                    ahead.close()

        # the prediction files (a large SA-Co/Gold results file) are read while the benchmark loads
        return self.start("open benchmark", tasks.load_benchmark, kind, ns, argv, has_predictions(kind, ns),
                          on_done=loaded, sync=sync, on_error=on_error)

    def _loaded(self, res: Any) -> bool:
        """Show a loaded benchmark; False when the sample shown was kept (an edit started
        while it loaded, which the user chose to keep)."""
        if not self.state.may_leave("opening another benchmark"):
            return False
        label = f"{res.kind.title or res.kind.name}: {res.benchmark.name}"
        if res.argv:
            self.settings.add_recent(res.kind.name, res.argv, recent_label(res.kind.name, res.argv))
        self.message_bar.dismiss()  # what was said about the previous benchmark
        self.message_bar.show_message(f"opened {label} ({len(res.benchmark.samples)} samples)", "info")
        self.state.set_benchmark(res.kind, res.benchmark, res.namespace, res.argv,
                                 self.settings.params.get(res.kind.name))
        return True

    def fill_demo_menu(self, menu: QMenu) -> None:
        """File › Open demo: one entry per bundled demo benchmark kind."""
        try:
            from masklens.core.kinds.demo import demo_kinds
        except ImportError:
            menu.addAction("(not installed)").setEnabled(False)
            return
        for name in demo_kinds():
            try:
                title = get_kind(name).title or name
            except (ImportError, MasklensError):
                continue
            act = menu.addAction(f"{title} ({name})")
            act.setObjectName(f"open-demo-{name}")
            act.triggered.connect(lambda _=False, k=name: self.open_demo(k))

    def open_demo(self, kind: str | None = None, *, sync: bool = False) -> bool:
        if not self.state.may_leave("opening another benchmark"):  # e.g. an unaccepted edit kept
            return False
        try:
            from masklens.core.kinds.demo import demo_kinds, demo_namespace
        except ImportError:
            self.message_bar.show_message("the bundled demo benchmark is not installed", "error")
            return False
        kinds = demo_kinds()
        name = kind or kinds[0]
        if name not in kinds:
            self.message_bar.show_message(f"no demo for '{name}' (demos: {', '.join(kinds)})", "error")
            return False
        try:
            ns = demo_namespace(name, with_predictions=True)
        except MasklensError as exc:
            self.message_bar.show_message(str(exc), "error")
            return False
        from masklens.gui.jobs import tasks

        kind_obj = get_kind(name)

        def loaded(res: Any) -> None:
            if not self._loaded(res):
                return
            if self._pred_values(kind_obj, ns):
                self.attach_predictions(ns, "demo predictions", sync=sync)

        return self.start("open demo", tasks.load_benchmark, kind_obj, ns, [], on_done=loaded, sync=sync)

    @staticmethod
    def _pred_values(kind: Any, ns: argparse.Namespace) -> dict[str, Any]:
        return {a.dest: getattr(ns, a.dest) for a in file_actions(kind_parser(kind))
                if is_prediction_arg(a) and getattr(ns, a.dest, None)}

    def attach_predictions(self, namespace: argparse.Namespace, name: str, *, sync: bool = False,
                           argv: list[str] | None = None, ahead: PredictionsAhead | None = None) -> bool:
        """Load and score a prediction set (a replay layer) named ``name``; ``ahead``: its files
        read ahead while the benchmark loaded (the scoring job's to close)."""
        from masklens.gui.jobs import tasks

        kind, bench = self.state.kind, self.state.benchmark
        if kind is None or bench is None:
            if ahead is not None:
                ahead.close()
            self.message_bar.show_message("open a benchmark first", "warning")
            return False
        base, i = name, 2
        while name in self.state.prediction_sets:
            name, i = f"{base} ({i})", i + 1

        derivation = self.state.derivation  # the readouts below are derived for the inputs of now

        def done(value: tasks.Scored) -> None:
            if self.state.benchmark is bench:
                self.state.add_predictions(name, value.predictions, value.scorer, argv=argv,  # argv: kept with the session
                                           readouts=(derivation, value.readouts))
                self.message_bar.show_message(f"predictions '{name}' scored", "info")

        return self.start("score predictions", tasks.score_predictions, kind, bench, namespace,
                          dict(self.state.params), None, ahead, on_done=done, sync=sync)

    def open_predictions_dialog(self) -> bool:
        if self.state.kind is None or self.state.namespace is None:
            self.message_bar.show_message("open a benchmark first", "warning")
            return False
        dlg = OpenDialog(self.parent, kind=self.state.kind.name, predictions_only=True)
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return False
        return self.open_prediction_files(dlg.prediction_argvs())

    def open_prediction_files(self, argvs: list[list[str]]) -> bool:
        """Attach one layer per argv (several files picked at once become several layers)."""
        if not argvs:
            self.message_bar.show_message("no prediction file given", "warning")
            return False
        return all([self.open_predictions(argv) for argv in argvs])

    def open_predictions(self, pred_argv: list[str], name: str | None = None, *, sync: bool = False) -> bool:
        """Attach predictions given as the kind's prediction arguments (e.g. ``["--pred", FILE]``)."""
        kind, namespace = self.state.kind, self.state.namespace
        if kind is None or namespace is None:
            self.message_bar.show_message("open a benchmark first", "warning")
            return False
        try:
            parsed = kind_parser(kind, all_optional=True).parse_known_args(pred_argv)[0]
        except MasklensError as exc:
            self.message_bar.show_message(str(exc), "error")
            return False
        values = self._pred_values(kind, parsed)
        if not values:
            self.message_bar.show_message("no prediction file given", "warning")
            return False
        from masklens.gui.jobs.tasks import with_predictions

        ns = with_predictions(namespace, values)
        first = next(iter(values.values()))
        label = name or Path(str(first[0] if isinstance(first, list) else first)).name
        return self.attach_predictions(ns, label, sync=sync, argv=pred_argv)

    def fill_recent(self, menu: QMenu) -> None:
        """File › Open recent, as the settings remember it now."""
        menu.clear()
        for r in self.settings.recent:
            act = menu.addAction(recent_label(r.get("kind", "?"), list(r.get("argv", []))))
            act.setToolTip(" ".join(r.get("argv", [])))
            act.triggered.connect(lambda _=False, r=r: self.open_benchmark(r["kind"], list(r["argv"])))
        if not self.settings.recent:
            menu.addAction("(none)").setEnabled(False)

    # ------------------------------------------------------------ typed prompts
    @property
    def models(self) -> Any:
        """The window's ModelManager (created on first use)."""
        if self._models is None:
            from masklens.core.models.manager import ModelManager
            from masklens.core.models.remote import window_factory

            self._models = ModelManager(factory=window_factory(self.model_host))
        return self._models

    def run_prompt(self, req: Any, *, sync: bool = False) -> bool:
        """Run a typed prompt (PromptRequest) on the current sample; the result becomes a layer."""
        from masklens.gui.canvas.prepared import overlay_maker
        from masklens.gui.jobs import tasks
        from masklens.gui.state import LiveResult

        sample, kind = self.state.sample, self.state.kind
        if sample is None or kind is None:
            self.message_bar.show_message("open a benchmark first", "warning")
            return False
        visual, note = None, ""
        req, visual, note = self.visual_tool.for_run(req, req.model)  # boxes/points drawn on the canvas
        try:
            from masklens.core.scoring.readout import make_typed_prompt

            image_key = make_typed_prompt(sample, req.text, req.role, level=req.level, image=req.image,
                                          replaces=req.replaces).image
            rgb = self.store.rgb_for_model(sample.images[image_key])
        except (MasklensError, KeyError) as exc:
            self.message_bar.show_message(f"cannot run {req.model}: {exc}", "error")
            return False
        if (req.model in self.prompt_bar.weights_missing
                and not self.settings.model_options.get(req.model, {}).get("weights")):
            # known before any load: no ~10 s of hub retries to learn it again
            self.message_bar.show_message(weights_missing_message(req.model), "error")
            return False
        self.settings.add_history(req.text)
        if note:
            self.message_bar.show_message(note, "info")
        self.settings.model = req.model
        self.state.set_model(req.model)

        bench = self.state.benchmark

        def done(run: tasks.PromptRun) -> None:
            if self.state.benchmark is not bench:  # another benchmark was opened meanwhile
                return
            focus = QApplication.focusWidget()
            in_tabs = focus is not None and self.tabs.isAncestorOf(focus)
            self.tabs.setCurrentWidget(self.compare_view)  # where the new layer is shown beside the others
            now = QApplication.focusWidget()
            if in_tabs and (now is None or not self.tabs.isAncestorOf(now)):
                self.compare_view.setFocus()  # the hidden canvas had it: Esc still clears the drawn prompt
            self.state.add_live(LiveResult(0, run.sample_id, run.prompt, run.model, run.prediction,
                                           run.generic, run.benchmark, run.replaced, seconds=run.seconds,
                                           extra={"staged": run.staged, "base": run.base,
                                                  "from_cache": run.from_cache}))
            self.status.update_device()
            if run.cache_problem:
                self.message_bar.show_message(run.cache_problem, "warning")

        self._serial += 1
        serial = self._serial
        options = dict(self.settings.model_options.get(req.model, {}))
        focus = QApplication.focusWidget()
        if focus is not None and self.prompt_bar.isAncestorOf(focus):  # Enter in the prompt, Run
            self.browser.table.setFocus(Qt.FocusReason.OtherFocusReason)  # the arrows walk the list again
        return self.start(f"run {req.model}", tasks.run_prompt, self.models, req.model, options, rgb, kind, sample,
                          req.text, req.role, req.level, image_key, dict(self.state.params),
                          self.state.predictions(), serial, req.replaces, self.prediction_caches.open, visual,
                          overlay_maker(self.store, self.state.score_threshold, self.toggles, rgb.shape[:2]),
                          on_done=done, sync=sync)

    def open_model_options(self, model: str) -> bool:
        """Edit the options (weights, device, …) used for ``model``; kept in the settings."""
        from masklens.gui.prompts.model_options import ModelOptionsDialog

        if not model:
            return False
        dlg = ModelOptionsDialog(model, self.settings.model_options.get(model, {}), self.parent)
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return False
        self.set_model_options(model, dlg.options)
        return True

    def set_model_options(self, model: str, options: dict[str, Any]) -> None:
        self.settings.model_options[model] = dict(options)
        where = options.get("weights") or "its default weights"
        self.message_bar.show_message(f"{model} will use {where}", "info")

    def set_colour(self, key: str, value: str) -> None:
        """Change an overlay colour (saved with the settings) and redraw."""
        self.toggles.colours[key] = value
        self.settings.colours[key] = value
        self.render()

    def open_colours_dialog(self) -> None:
        from masklens.gui.dialogs.colours_dialog import ColoursDialog

        ColoursDialog(self.toggles.colours, self.set_colour, self.parent).exec()

    # ------------------------------------------------------------ navigation
    def step_sample(self, delta: int) -> None:
        self.state.set_index(self.state.index + delta)

    def next_match(self) -> bool:
        """Jump to the next sample that matches the browser's current filter (e.g. a failure)."""
        row = self.browser.next_match_after(self.state.index)
        if row is None:
            self.message_bar.show_message("no further sample matches the current filter", "info")
            return False
        self.state.set_index(row)
        return True

    def unload_models(self) -> None:
        """Give back the models loaded in this process (the window closes)."""
        if self._models is not None:
            self._models.unload()
