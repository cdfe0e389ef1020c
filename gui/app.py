"""Application entry point: `masklens gui [--demo] [--kind K] [--screenshot FILE.png] …`."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from masklens.core.errors import MasklensError
from masklens.core.files import limits
from masklens.core.runtime import logs

if TYPE_CHECKING:
    from masklens.gui.window.main_window import MainWindow

_NOISE = ("This plugin does not support propagateSizeHints()",)


def _quiet_offscreen_warnings() -> None:
    """Drop the offscreen platform's harmless "propagateSizeHints" warning (one per window)."""
    from PySide6.QtCore import qInstallMessageHandler

    previous = None

    def handler(mode, context, message):  # noqa: ANN001 - Qt callback
        if message in _NOISE:
            return
        if previous is not None:
            previous(mode, context, message)
        else:
            sys.stderr.write(message + "\n")

    previous = qInstallMessageHandler(handler)


def _require_display() -> None:
    """On Linux without a display Qt aborts with a cryptic plugin message; say what to do."""
    if sys.platform != "linux" or os.environ.get("QT_QPA_PLATFORM"):
        return
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return
    raise MasklensError(
        "no display found (neither DISPLAY nor WAYLAND_DISPLAY is set)",
        hint="run it in a desktop session (or `ssh -X`), or render offscreen: "
        "`masklens gui --demo --screenshot window.png`. On Debian/Ubuntu desktops Qt also "
        "needs system X11 libraries (see docs/gui.md, Troubleshooting).",
    )


def run_app(args: argparse.Namespace) -> int:
    shot = args.screenshot
    if shot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _require_display()
    logs.configure()  # also when the window is started without the CLI
    from PySide6.QtWidgets import QApplication

    from masklens.gui.dialogs import about
    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    _quiet_offscreen_warnings()
    existing = QApplication.instance()  # typed QCoreApplication
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("masklens")
    app.setDesktopFileName("masklens")  # Wayland finds the icon through masklens.desktop
    app.setWindowIcon(about.app_icon())
    # screenshots are reproducible: default settings, nothing saved
    window = MainWindow(Settings(), persist=False) if shot else MainWindow()
    install_excepthook(window)
    kind = args.kind
    if args.workspace:
        from masklens.gui.window.workspace import open_workspace

        open_workspace(window.state, window.commands, args.workspace, sync=bool(shot))
        apply_view_options(window, args, sync=bool(shot))
    elif args.demo or not kind or shot:  # a screenshot cannot answer a dialog
        window.commands.open_demo(kind, sync=bool(shot))
        apply_view_options(window, args, sync=bool(shot))
    if shot:
        return screenshot(app, window, shot, parse_size(args.size))
    window.show()
    if kind and not args.demo and not args.workspace:  # ask for the files once the window is up
        from PySide6.QtCore import QTimer

        QTimer.singleShot(0, lambda: window.commands.open_benchmark_dialog(kind))
    return app.exec()


def install_excepthook(window: MainWindow) -> None:
    """An exception escaping a Qt slot is logged and shown in the message bar: the window stays."""
    import logging
    import traceback

    def hook(kind: type[BaseException], value: BaseException, tb) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, value, tb)
            return
        logging.getLogger("masklens.gui").error("".join(traceback.format_exception(kind, value, tb)))
        text = str(value) if isinstance(value, MasklensError) else logs.internal_error(value)
        try:
            window.message_bar.show_message(text, "error")
        except RuntimeError:  # the window is gone
            sys.__excepthook__(kind, value, tb)

    sys.excepthook = hook


def parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise MasklensError(f"--size must look like 1600x1000, got '{text}'") from None
    if w < 1400 or h < 900:
        raise MasklensError(f"--size must be at least 1400x900, got '{text}'")
    lim = limits.current()  # the image limits: a window is rendered into an image of 4 bytes a pixel
    if max(w, h) > lim.max_mask_side or w * h * 4 > lim.max_image_bytes:
        raise MasklensError(
            f"--size {w}x{h} is larger than the image limits ({lim.max_mask_side} px a side, "
            f"{lim.max_image_bytes // 2**20} MiB a screenshot)",
            hint="raise MASKLENS_MAX_MASK_SIDE / MASKLENS_MAX_IMAGE_BYTES if this is intended")
    return w, h


def apply_view_options(window: MainWindow, args: argparse.Namespace, *, sync: bool) -> None:
    """--filter, --sample, --error-view, --prompt, --compare (for screenshots and bug reports)."""
    from masklens.core.schema import Role
    from masklens.gui.prompts.prompt_bar import PromptRequest

    state = window.state
    if state.benchmark is None:
        return
    if args.filter:
        combo = window.browser.presets
        idx = combo.findText(args.filter)
        if idx < 0:
            raise MasklensError(f"no filter preset '{args.filter}'",
                                hint="presets: " + ", ".join(combo.itemText(i) for i in range(combo.count())))
        combo.setCurrentIndex(idx)
        first = window.browser.next_match_after(-1)
        if first is not None:
            state.set_index(first)
    if args.sample:
        ids = [s.id for s in state.benchmark.samples]
        sid = args.sample
        if sid.startswith("#") and sid[1:].isdigit() and 0 < int(sid[1:]) <= len(ids):
            state.set_index(int(sid[1:]) - 1)
        elif sid in ids:
            state.set_index(ids.index(sid))
        else:
            raise MasklensError(f"no sample '{sid}' in {state.benchmark.name}")
    if args.error_view:
        window.view_toolbar.actions_by_name["error"].setChecked(True)
    for spec in args.prompt or []:
        head, sep, text = spec.partition("=")
        if not sep or not text.strip():
            raise MasklensError(f"--prompt must be ROLE[:LEVEL]=TEXT, got '{spec}'")
        role, _, level = head.partition(":")
        try:
            req = PromptRequest(text.strip(), Role(role.strip()), int(level) if level else None, None,
                                args.model or window.settings.model or "demo")
        except ValueError:
            raise MasklensError(f"--prompt: unknown role '{role}'",
                                hint="roles: " + ", ".join(r.value for r in Role)) from None
        window.commands.run_prompt(req, sync=sync)
    if args.compare:
        window.tabs.setCurrentIndex(1)


def screenshot(app, window, path: str, size: tuple[int, int] = (1600, 1000)) -> int:
    """Render the window offscreen at ``size`` (≥ 1400×900) to ``path`` and return 0."""
    window.resize(*size)
    if window.message_bar.level == "info":  # keep warnings and errors, drop "opened …"
        window.message_bar.hide()
    window.show()
    for _ in range(5):
        app.processEvents()
    window.sample_view.fit()
    window.compare_view.fit()
    app.processEvents()
    if not window.grab().save(path):
        raise MasklensError("cannot write the screenshot", path=path)
    print(f"wrote {path}", file=sys.stderr)
    _finish_jobs(app, window)
    window.close()
    return 0


def _finish_jobs(app, window, timeout_s: float = 20.0) -> None:
    """Cancel the window's background jobs (e.g. the edit-leakage measure a benchmark starts) and
    let them end before the process does, so no thread outlives the objects it reports to."""
    from PySide6.QtCore import QThreadPool

    window.jobs.cancel_all()
    window.rescoring.runner.cancel_all()
    QThreadPool.globalInstance().waitForDone(int(timeout_s * 1000))
    app.processEvents()
