"""A job still running when its window (and the window's job runner) is deleted ends quietly: no
"Signal source has been deleted" from its callbacks, and it is told to cancel."""

from __future__ import annotations

import threading

from masklens.gui.jobs.workers import JobRunner


def test_a_job_that_outlives_its_runner_ends_without_an_error(qtbot):
    release, seen_cancel, ended = threading.Event(), threading.Event(), threading.Event()

    def work(ctx):
        try:
            release.wait(10)
            if ctx.cancelled:
                seen_cancel.set()
            ctx.progress(1, 1, "done")
            raise RuntimeError("fails after its window went")
        finally:
            ended.set()

    runner = JobRunner()
    runner.run("slow", work, on_done=lambda _v: None)
    qtbot.waitUntil(lambda: runner.jobs and runner.jobs[0].started, timeout=5000)
    runner.deleteLater()
    qtbot.wait(50)  # the runner is gone (destroyed), the job still runs
    release.set()
    qtbot.waitUntil(ended.is_set, timeout=5000)
    qtbot.wait(200)  # its progress, errored and finished signals arrive: none may raise
    assert seen_cancel.is_set()
