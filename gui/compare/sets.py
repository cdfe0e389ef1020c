"""Compare prediction sets: two or more sets (attached files, evaluation runs) side by side on the
same sample, one row per set with the benchmark's own view and captions, pan/zoom synced, plus
browser columns per set and "fixed by B" / "broken by B" filters.

A is the active set (the one the browser and the Sample tab show); B, C, … are the other ticked
sets in order. "Failure" is a filter of the benchmark's own (its presets, e.g. CAFE "negative
prompt is TA-FP"), chosen in the tab; a sample is *fixed by B* when it is a failure under A and
not under B, *broken by B* the other way round. The browser gets the columns
``compare.A.fails``, ``compare.B.fails``, ``compare.B.change`` (fixed / broken / same) and the
failure's keys under B (``compare.B.neg_class``), and the presets "fixed by B", "broken by B".

The prediction files of the sets, the ticked sets, the failure and the tab are remembered per
benchmark in the settings (``Settings.sessions``) and restored when it is opened again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from masklens.core.schema import Prediction
from masklens.core.scoring.records import Record, Records
from masklens.gui.browser.filters import (
    Filter,
    Row,
    Unreviewed,
    flatten,
    presets_for,
    register_presets,
)
from masklens.gui.canvas.sample_view import RenderContext, SampleViewWidget
from masklens.gui.cards.deck import SYNC_SUMMARY_LIMIT
from masklens.gui.compare.cards import SetCards
from masklens.gui.views import PanelSpec
from masklens.gui.window.context import WindowPart

if TYPE_CHECKING:
    from masklens.gui.browser.sample_browser import SampleBrowser
    from masklens.gui.jobs.workers import JobRunner
    from masklens.gui.prompts.live_list import LiveList
    from masklens.gui.settings import Settings
    from masklens.gui.state import AppState
    from masklens.gui.widgets.quiet_tabs import QuietTabWidget
    from masklens.gui.window.commands import WindowCommands
    from masklens.gui.window.message_bar import MessageBar
    from masklens.gui.window.renderer import Renderer
    from masklens.gui.window.view_toolbar import ViewToolbar

LETTERS = "ABCDEF"
#: up to this many samples the compare columns are built at once, beyond on the worker pool
SYNC_ROWS = 5000
_SEP = "\x1f"  # joins a set letter and a prompt id in the panels' prompt ids
#: benchmarks whose compared sets the settings remember
MAX_SESSIONS = 20

register_presets("*", [
    item for letter in LETTERS[1:4] for item in (
        (f"fixed by {letter} (compared sets)", f"compare.{letter}.change == fixed"),
        (f"broken by {letter} (compared sets)", f"compare.{letter}.change == broken"),
    )
])


def needed_tops(crit: Filter, keys: list[str]) -> set[str] | None:
    """The top-level readout keys a failure filter reads (None: all of them)."""
    tops = {re.split(r"[.\[]", k, maxsplit=1)[0] for k in keys}
    tops.update(crit.read_tops())
    return tops or None


def flatten_some(record: dict[str, Any], tops: set[str] | None) -> dict[str, Any]:
    """:func:`flatten` of only the ``tops`` entries of ``record`` (100,000 records: ~20× faster)."""
    if tops is None:
        return flatten(record)
    return flatten({k: record[k] for k in tops if k in record})


def compare_rows(samples: list[Any], per_set: Sequence[Sequence[Record]], crit: Filter,
                 *, only_needed: bool = True) -> list[dict[str, Any]]:
    """The first set's readouts, each with a ``compare`` section in front: per set whether the
    sample fails ``crit``, and for B, C, … the change against A and the values ``crit`` reads."""
    keys = crit.read_keys()
    tops = needed_tops(crit, keys) if only_needed else None
    out = []
    for i, rec in enumerate(per_set[0]):
        flats = [flatten_some(r[i], tops) for r in per_set]
        fails = [bool(crit(Row(samples[i], f))) for f in flats]
        section: dict[str, Any] = {"A": {"fails": fails[0]}}
        for letter, f, bad in zip(LETTERS[1:], flats[1:], fails[1:], strict=False):
            change = "fixed" if fails[0] and not bad else "broken" if bad and not fails[0] else "same"
            section[letter] = {"fails": bad, "change": change, **{k: f.get(k) for k in keys}}
        out.append({"compare": section, **rec})
    return out


def _is_compare_filter(f: Filter) -> bool:
    return type(f) in (Filter, Unreviewed) or any(k.startswith("compare.") for k in f.keys)


class CompareSetsTab(QWidget):
    """The tab: set check boxes, the failure choice and a grid of panels (one row per set)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sets_row = QHBoxLayout()
        self.sets_row.setContentsMargins(4, 2, 4, 2)
        self.sets_row.addWidget(QLabel("Sets:"))
        self.boxes: dict[str, QCheckBox] = {}
        self.typed = QCheckBox("typed prompts")
        self.typed.setChecked(True)
        self.typed.setToolTip("add the ticked typed-prompt results of this sample (Typed prompts dock) "
                              "as a last row")
        self.sets_row.addWidget(self.typed)
        self.failure = QComboBox()
        self.failure.setToolTip("what counts as a failure for “fixed by B” / “broken by B”: "
                                "one of the benchmark's filters")
        self.view = SampleViewWidget()
        self.view.empty.setText("Attach a second prediction set (File › Open predictions…, or "
                                "Evaluate › Run benchmark) and tick two or more sets here.")
        self.view.empty.setWordWrap(True)  # a long hint must not widen the window
        top = QHBoxLayout()
        top.addLayout(self.sets_row, 1)
        top.addWidget(QLabel("failure means"))
        top.addWidget(self.failure)
        self.cards = SetCards()  # each set's readout card
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.view)
        split.addWidget(self.cards)
        split.setStretchFactor(0, 1)
        split.setSizes([900, 300])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addWidget(split, 1)


class SetComparisonContext(WindowPart, Protocol):
    """What the comparison uses of the window: the state, the central tabs (it is one), the
    sample list (its columns), the view toolbar (the sets' order), the typed prompts' panels,
    the renderer, the jobs (large benchmarks' rows), the settings (session memory), the
    commands (reattaching a session's prediction files) and the message bar."""

    state: AppState
    tabs: QuietTabWidget
    browser: SampleBrowser
    view_toolbar: ViewToolbar
    live_list: LiveList
    renderer: Renderer
    jobs: JobRunner
    settings: Settings
    commands: WindowCommands
    message_bar: MessageBar


class SetComparison(QObject):
    """Wires the tab to the window: rendering, browser columns, filters and session memory
    (per benchmark, the prediction files attached, the ticked sets, the active set, the failure
    filter and the tab shown, in ``Settings.sessions``: the :data:`MAX_SESSIONS` most recent)."""

    def __init__(self, window: SetComparisonContext) -> None:
        super().__init__(window.window())
        self.w = window
        self.tab = CompareSetsTab()
        self.failures: list[Filter] = []
        self._readouts: dict[str, tuple[tuple[tuple[str, float], ...], Records]] = {}  # (params, readouts)
        self._pending: dict[str, Any] = {}  # remembered ticks/failure waiting for their sets
        #: whether the rows last given to the browser bring the compare section's columns (two or
        #: more sets compared): the list's columns are then keyed by none of the window's keys
        self.brings_columns = False
        self._rows_memo: tuple | None = None
        self._serial = 0
        self.ticked: list[str] = []
        s = window.state
        s.predictionsChanged.connect(self._sets_changed)
        s.benchmarkChanged.connect(self._benchmark_changed)
        self.tab.failure.currentIndexChanged.connect(lambda _: self._changed())
        self.tab.typed.toggled.connect(lambda _: self._changed())
        window.tabs.currentChanged.connect(lambda _: self._remember())

    # ------------------------------------------------------------ which sets
    def compared(self) -> list[str]:
        """Set names in letter order: A = the active set, then the other ticked sets in the sets'
        order (:meth:`AppState.set_order`, which the report and a restored session share)."""
        ticked = set(self.ticked)
        return [n for n in self.w.state.set_order() if n in ticked][: len(LETTERS)]

    def tick(self, name: str, on: bool = True) -> None:
        box = self.tab.boxes.get(name)
        if box is not None:
            box.setChecked(on)  # -> _toggled

    def _toggled(self, name: str, on: bool) -> None:
        self.ticked = [n for n in self.ticked if n != name] + ([name] if on else [])
        self._changed()

    def _sets_changed(self) -> None:
        if self._pending.get("order") and self.w.state.reorder_sets(self._pending["order"]):
            self.w.view_toolbar.set_sets(list(self.w.state.prediction_sets), self.w.state.active)
        names = list(self.w.state.prediction_sets)
        for name in [n for n in self.tab.boxes if n not in names]:
            self.tab.boxes.pop(name).deleteLater()
        for name in names:
            if name not in self.tab.boxes:
                box = QCheckBox(name)
                box.toggled.connect(lambda on, n=name: self._toggled(n, on))
                self.tab.sets_row.insertWidget(self.tab.sets_row.count() - 1, box)
                self.tab.boxes[name] = box
                known = self._pending.get("known", ())
                if name in self._pending.get("compared", ()) or name not in known:
                    box.setChecked(True)  # new sets join the comparison; remembered ticks are kept
        for i, name in enumerate(names):  # the boxes in the sets' order (a session may reorder them)
            self.tab.sets_row.insertWidget(1 + i, self.tab.boxes[name])
        active = self._pending.get("active")
        if active in names and active != self.w.state.active:
            self._pending.pop("active")
            self.w.state.set_active(active)  # emits predictionsChanged again
            return
        self._restore_failure()
        self._remember_sets()
        self._changed()

    # ------------------------------------------------------------ failure filter
    def _benchmark_changed(self) -> None:
        for box in self.tab.boxes.values():
            box.deleteLater()
        self.tab.boxes, self.ticked, self._readouts, self.brings_columns = {}, [], {}, False
        self._rows_memo = None
        self._serial += 1  # a worker still building the previous benchmark's rows is ignored
        self._fill_failures([])
        self.tab.view.show_panels([], None, 1)  # nothing of the previous benchmark stays drawn
        self._restore_session()

    def _fill_failures(self, columns: list[str]) -> None:
        current = self.tab.failure.currentText()
        kind = self.w.state.kind.name if self.w.state.kind else None
        self.failures = [f for f in presets_for(kind, columns) if not _is_compare_filter(f)] if columns else []
        self.tab.failure.blockSignals(True)
        self.tab.failure.clear()
        self.tab.failure.addItems([f.label for f in self.failures])
        idx = self.tab.failure.findText(self._pending.get("failure") or current)
        self.tab.failure.setCurrentIndex(max(idx, 0))
        self.tab.failure.blockSignals(False)

    def _restore_failure(self) -> None:
        rows = self._set_readouts(self.w.state.active) if self.w.state.active else []
        if rows and not self.failures:
            self._fill_failures(list(flatten(rows[0])))

    def failure(self) -> Filter | None:
        i = self.tab.failure.currentIndex()
        return self.failures[i] if 0 <= i < len(self.failures) else None

    # ------------------------------------------------------------ readouts and browser columns
    def _set_readouts(self, name: str) -> Records:
        """A set's readouts at the current parameters (the state's for the active set)."""
        s = self.w.state
        if name in s.readouts:
            return s.readouts[name]
        key = tuple(sorted(s.params.items()))
        hit = self._readouts.get(name)
        if hit is None or hit[0] != key:
            hit = self._readouts[name] = (key, s.scorers[name].readouts(s.params))
        return hit[1]

    def rows(self) -> list[dict[str, Any]] | None:
        """The active set's readouts with a ``compare`` section in front (None: nothing compared)."""
        names, crit, s = self.compared(), self.failure(), self.w.state
        if len(names) < 2 or crit is None or s.benchmark is None:
            return None
        samples = s.benchmark.samples
        per_set = [self._set_readouts(n) for n in names]
        memo_key = (tuple(names), crit.label)
        memo = self._rows_memo  # holds the readout lists it was built from: identity is safe
        if (memo is not None and memo[0] == memo_key
                and all(a is b for a, b in zip(memo[2], per_set, strict=True))):
            return memo[1]
        out = compare_rows(samples, per_set, crit)
        self._rows_memo = (memo_key, out, per_set)
        return out

    def browser_readouts(self, plain: Sequence[Record] | None) -> Sequence[Record] | None:
        """What the browser shows for the active set's readouts ``plain``: themselves, or with the
        ``compare`` section in front while two or more sets are ticked. Small benchmarks get it at
        once; large ones (> :data:`SYNC_ROWS`) get it from the worker pool (latest request wins)
        and meanwhile keep the previous comparison's columns, so the chosen filter stays."""
        self._serial += 1
        self._readouts = {k: v for k, v in self._readouts.items() if k in self.w.state.scorers}
        self._restore_failure()
        names, crit, s = self.compared(), self.failure(), self.w.state
        if plain is None or len(names) < 2 or crit is None or s.benchmark is None:
            self.brings_columns = False
            return plain
        self.brings_columns = True
        if len(plain) <= SYNC_ROWS or self.rows_ready():
            return self.rows()
        serial, samples = self._serial, s.benchmark.samples
        per_set = [self._set_readouts(name) for name in names]

        def build(ctx: Any) -> list[dict[str, Any]]:
            return compare_rows(samples, per_set, crit)

        def done(rows: list[dict[str, Any]]) -> None:
            if serial == self._serial:  # a newer slider value or tick supersedes this one
                self._rows_memo = ((tuple(names), crit.label), rows, per_set)
                self._show_rows(rows)

        self.w.jobs.run("compare sets", build, on_done=done)
        memo = self._rows_memo
        if memo is not None and memo[0] == (tuple(names), crit.label) and len(memo[1]) == len(plain):
            return [{"compare": old["compare"], **rec} for old, rec in zip(memo[1], plain, strict=True)]
        keys = crit.read_keys()
        pending = {"A": {"fails": None}, **{letter: {"fails": None, "change": None, **dict.fromkeys(keys)}
                                           for letter in LETTERS[1:len(names)]}}
        return [{"compare": pending, **rec} for rec in plain]

    def _update_browser(self) -> None:
        s = self.w.state
        self._show_rows(self.browser_readouts(s.readouts.get(s.active or "")), force=True)

    def rows_ready(self) -> bool:
        """Whether :meth:`rows` is free: nothing compared, or memoised for these readouts."""
        names, crit = self.compared(), self.failure()
        if len(names) < 2 or crit is None:
            return True
        memo = self._rows_memo
        return (memo is not None and memo[0] == (tuple(names), crit.label)
                and all(a is b for a, b in zip(memo[2], [self._set_readouts(x) for x in names], strict=True)))

    def _show_rows(self, rows: Sequence[Record] | None, force: bool = False) -> None:
        if rows is None and not force:
            return
        self.w.browser.set_readouts(rows)
        self.w.browser.select_source_row(self.w.state.index)

    def _changed(self) -> None:
        self._update_browser()
        self._remember()
        if self.shown():
            self.w.renderer.render()

    # ------------------------------------------------------------ drawing
    def shown(self) -> bool:
        return self.w.tabs.currentWidget() is self.tab

    def render(self, ctx: RenderContext, view: Any) -> None:
        """One row per compared set: the benchmark's panels with that set's predictions and captions."""
        s, sample = self.w.state, ctx.sample
        names = self.compared()
        base = view.panels(sample)
        specs: list[PanelSpec] = []
        for letter, name in zip(LETTERS, names, strict=False):
            fails = self._fails(self._record(name))  # the sample's failure under this set
            mark = "" if fails is None else " ✗" if fails else " ✓"
            for spec in base:
                pid = f"{letter}{_SEP}{spec.prompt_id}" if spec.prompt_id else None
                specs.append(replace(spec, title=f"{letter}{mark} · {name} · {spec.title}", prompt_id=pid))
        if self.tab.typed.isChecked():  # typed-prompt layers of this sample, after the sets
            specs += self.w.live_list.panel_specs(sample)
        sets = dict(zip(LETTERS, names, strict=False))

        def prediction(pid: str | None) -> Any:
            if not pid or _SEP not in pid:
                return ctx.prediction(pid)
            letter, own = pid.split(_SEP, 1)
            return s.prediction_sets[sets[letter]].get(own) if letter in sets else None

        def caption(spec: PanelSpec) -> str:
            if not spec.prompt_id or _SEP not in spec.prompt_id:
                return ctx.caption(spec)
            letter, own = spec.prompt_id.split(_SEP, 1)
            return view.safe_caption(sample, sample.prompt(own), self._record(sets[letter]), s.params)

        local = replace(ctx, prediction=prediction, caption=caption)
        self.tab.view.show_panels(specs, local, max(1, len(base)))
        self.tab.cards.show_sets(s.kind, sample, dict(s.params), [
            (letter, name, self._record(name),
             partial(self._set_prediction, name), partial(self._summary, name))
            for letter, name in sets.items()])
        crit = self.failure()
        for panel in self.tab.view.panels:
            panel.title.setToolTip(f"✗: the sample is a failure under this set ({crit.label}); ✓: it is not"
                                   if crit is not None else panel.title.text())

    def _set_prediction(self, name: str, prompt_id: str) -> Prediction | None:
        """Set ``name``'s prediction for a prompt (for its card)."""
        return self.w.state.prediction_sets[name].get(prompt_id)

    def _summary(self, name: str) -> Any:
        """A set's benchmark-level summary at the current parameters (e.g. OVS τ*) for its card;
        only for benchmarks small enough to compute it on the GUI thread (else None)."""
        s = self.w.state
        if (s.benchmark is None or s.kind is None or len(s.benchmark.samples) > SYNC_SUMMARY_LIMIT
                or name not in s.scorers):
            return None
        scorer = s.scorers[name]
        return s.kind.summarize(s.benchmark.samples, scorer.overlaps, self._set_readouts(name),
                                s.kind.resolve_params(s.params))

    def _record(self, name: str) -> dict[str, Any] | None:
        rows = self._set_readouts(name)
        i = self.w.state.index
        return rows[i] if i < len(rows) else None

    def _fails(self, rec: dict[str, Any] | None) -> bool | None:
        crit = self.failure()
        if crit is None or rec is None or self.w.state.sample is None:
            return None
        return bool(crit(Row(self.w.state.sample, flatten(rec))))

    # ------------------------------------------------------------ session memory
    def _session_key(self) -> str | None:
        s = self.w.state
        if s.kind is None or s.benchmark is None:
            return None
        return f"{s.kind.name}:{s.benchmark.name}:{' '.join(s.argv)}"

    def _entry(self, key: str) -> dict[str, Any]:
        """This benchmark's session entry, moved to the end (most recent); the oldest beyond
        :data:`MAX_SESSIONS` are dropped."""
        sessions = self.w.settings.sessions
        entry = sessions.pop(key, {})
        sessions[key] = entry
        while len(sessions) > MAX_SESSIONS:
            sessions.pop(next(iter(sessions)))
        return entry

    def _remember_sets(self) -> None:
        key = self._session_key()
        if key is None:
            return
        entry = self._entry(key)
        files = dict(entry.get("sets", {}))
        files.update(self.w.state.set_argv)  # the prediction files of the sets attached from files
        entry["sets"] = files
        names = list(self.w.state.prediction_sets)  # their order: A, B, … mean the same after a restart
        names += [n for n in entry.get("order", ()) if n not in names]
        rank = {n: i for i, n in enumerate(self._pending.get("order", ()))}  # still arriving: keep theirs
        entry["order"] = sorted(names, key=lambda n: rank.get(n, len(rank)))

    def _remember(self) -> None:
        key = self._session_key()
        if key is None or self._pending.get("restoring"):
            return
        entry = self._entry(key)
        entry["compared"] = list(self.ticked)
        if self.w.state.active:
            entry["active"] = self.w.state.active
        crit = self.failure()
        if crit is not None:
            entry["failure"] = crit.label
        entry["tab"] = self.w.tabs.tabText(self.w.tabs.currentIndex())

    def _restore_session(self) -> None:
        key = self._session_key()
        entry = self.w.settings.sessions.get(key or "", {})
        self._pending = {k: entry[k] for k in ("compared", "failure", "active", "order") if k in entry}
        self._pending["known"] = set(entry.get("sets", {})) | set(entry.get("compared", ()))
        for name, argv in list(entry.get("sets", {}).items()):
            gone = [a for a in argv if not str(a).startswith("-") and not Path(a).exists()]
            if gone:  # moved or deleted since: forget it, say so once
                entry["sets"].pop(name)
                self.w.message_bar.show_message(
                    f"remembered predictions '{name}' not reattached: {gone[0]} no longer exists", "warning")
            elif name not in self.w.state.prediction_sets and argv:
                self.w.commands.open_predictions(list(argv), name)
        tab = entry.get("tab")
        for i in range(self.w.tabs.count()):
            if tab and self.w.tabs.tabText(i) == tab:
                self._pending["restoring"] = True
                self.w.tabs.setCurrentIndex(i)
                self._pending.pop("restoring")
