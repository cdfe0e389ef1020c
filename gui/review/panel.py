"""Review panel: record a verdict on the current sample (or one of its prompts) with one key.

Each verdict is committed to the SQLite store the moment it is recorded. The
panel shows every reviewer's current verdicts on the sample, and "Next
unreviewed" asks the window to move on (signal ``nextUnreviewedRequested``).
Ctrl+Z undoes the verdicts (and ground-truth corrections) recorded in this session, newest first, by appending a
retraction to the store (nothing is deleted); each verdict and undo is confirmed
through ``confirmed(text)``. Enter in the Note field records the note with this
reviewer's current verdict on the target.
"""

from __future__ import annotations

from typing import Any

import shiboken6
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from masklens.core.errors import MasklensError
from masklens.core.review.corrections import Correction
from masklens.core.review.store import ReviewStore
from masklens.core.review.verdict_types import VERDICT_TYPES
from masklens.gui.widgets.elided_label import ElidedLabel


class ReviewPanel(QWidget):
    """Verdict buttons (one-key shortcuts), target (sample / prompt), note, reviewer name."""

    #: emitted with the sample id after a verdict was committed
    verdictRecorded = Signal(str)
    #: the samples whose verdicts changed (one, or a batch), after ``verdictRecorded``
    verdictsChanged = Signal(list)
    #: the user asked for the next sample without a verdict of this reviewer (sample id or "")
    nextUnreviewedRequested = Signal(str)
    #: a correction recorded in this session was retracted by Undo (its sample id)
    correctionRetracted = Signal(str)
    #: a short confirmation of what was recorded or undone (for the window's message bar)
    confirmed = Signal(str)
    #: the reviewer recording here changed (typed in the Reviewer field + Enter or leaving it)
    reviewerChanged = Signal(str)
    #: another process wrote to the store (an assignment, merged verdicts): read it again
    storeChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store: ReviewStore | None = None
        self.benchmark = ""
        self.sample_id = ""
        self.prompt_ids: list[str] = []
        self.prompt_names: dict[str, str] = {}  # prompt id → what the user reads (“text” (role))
        self.sample_order: list[str] = []  # for "next unreviewed" (set_store)
        self.title = ElidedLabel("No sample", opaque=True)  # a 160-character id never widens the dock
        self.title.setStyleSheet("font-weight: 600")
        self.target = QComboBox()
        self.target.setToolTip("the verdict is about the whole sample or one of its prompts")
        self.reviewer = QLineEdit()
        self.reviewer.setPlaceholderText("your name")
        self.reviewer.setToolTip("your name as a reviewer: your verdicts, queue and \"unreviewed\" "
                                 "go by it (Enter applies it; kept for the next start)")
        self.reviewer.editingFinished.connect(self._reviewer_edited)
        self._reviewer_shown = ""  # the reviewer the dock and the list show (who())
        self.note = QLineEdit()
        self.note.setPlaceholderText("optional note; Enter records it with your verdict")
        self.note.returnPressed.connect(self.record_note)
        self._focus_before_note: QWidget | None = None  # Enter gives the focus back to it
        self._agreement_key: tuple[Any, ...] | None = None  # the store state the agreement line is of
        app = QApplication.instance()
        if isinstance(app, QApplication):  # instance() is typed QCoreApplication
            app.focusChanged.connect(self._focus_changed)
        #: verdicts recorded in this session, newest last: one Verdict, or a tuple (a batch)
        self.undo_stack: list[Any] = []
        self._names: dict[tuple[str, str], str] = {}  # (sample, prompt id) → its words, for undo
        form = QFormLayout()
        form.addRow("About", self.target)
        form.addRow("Reviewer", self.reviewer)
        form.addRow("Note", self.note)
        grid = QGridLayout()
        self.buttons: dict[str, QPushButton] = {}
        for i, vt in enumerate(VERDICT_TYPES.values()):
            b = QPushButton(f"{vt.label}  [{vt.shortcut}]")
            b.setToolTip(vt.description)
            b.setCheckable(True)
            b.clicked.connect(lambda _=False, k=vt.key: self.record(k))
            grid.addWidget(b, i // 2, i % 2)
            self.buttons[vt.key] = b
        self.clear_button = QPushButton("Clear")
        self.clear_button.clicked.connect(self.clear)
        self.next_button = QPushButton("Next unreviewed  [N]")
        self.next_button.clicked.connect(self.request_next_unreviewed)
        self.undo_button = QPushButton("Undo  [Ctrl+Z]")
        self.undo_button.setToolTip("take back the last verdict you recorded (a retraction is appended; "
                                    "nothing is deleted)")
        self.undo_button.clicked.connect(self.undo)
        self.undo_button.setEnabled(False)
        for b in (*self.buttons.values(), self.clear_button, self.undo_button, self.next_button):
            b.setFocusPolicy(Qt.FocusPolicy.TabFocus)  # a click leaves the focus (and the keys) where it was
        row = QHBoxLayout()
        row.addWidget(self.clear_button)
        row.addWidget(self.undo_button)
        row.addWidget(self.next_button)
        self.current = QListWidget()
        self.current.setToolTip("every reviewer's current verdicts on this sample")
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.agreement = QLabel("")
        self.agreement.setWordWrap(True)
        self.agreement.setToolTip("agreement between reviewers over this benchmark's verdicts")
        lay = self._sections = QVBoxLayout(self)
        lay.addWidget(self.title)
        lay.addLayout(form)
        lay.addLayout(grid)
        lay.addLayout(row)
        lay.addWidget(QLabel("Verdicts on this sample"))
        lay.addWidget(self.current, 1)
        lay.addWidget(self.agreement)
        lay.addWidget(self.status)
        self.target.currentIndexChanged.connect(lambda _: self._refresh())
        self._set_enabled(False)
        # another process' writes (e.g. `masklens review assign` while the window is open) are
        # seen without reopening: SQLite's data_version, read twice a second (no table is read)
        self._store_version: int | None = None
        self._watch = QTimer(self, interval=STORE_POLL_MS)
        self._watch.timeout.connect(self._store_written_elsewhere)

    # ------------------------------------------------------------ wiring
    def add_section(self, widget: QWidget) -> None:
        """A section of another feature below the verdicts (e.g. the team view); it stretches."""
        self._sections.addWidget(widget, 1)

    def set_store(self, store: ReviewStore | None, sample_order: list[str] | None = None) -> None:
        """The benchmark's review store (None: none) and its samples' ids in order (what "next
        unreviewed" walks when no queue is assigned)."""
        self.sample_order = list(sample_order or []) if store is not None else []
        if store is not self.store:
            self.undo_stack = []  # their rows belong to the previous store
            self.undo_button.setEnabled(False)
            self.status.setText("")  # "saved: …" / "undone: …" were about the previous benchmark
        self.store = store
        if store is not None and not self.reviewer.text():
            self.reviewer.setText(store.reviewer)
        self._reviewer_shown = self.who()
        self._store_version = None
        if store is not None:
            self._store_written_elsewhere()  # takes the version now
            self._watch.start()
        else:
            self._watch.stop()
        self._set_enabled(store is not None and bool(self.sample_id))
        self._refresh()

    def set_sample(self, benchmark_key: str, sample_id: str, prompt_ids: list[str],
                   prompt_names: dict[str, str] | None = None) -> None:
        """The sample verdicts are about; ``prompt_names``: prompt id → the words shown for it
        (its text and role), never the benchmark's internal id."""
        if benchmark_key != self.benchmark:
            self.status.setText("")  # a line about another benchmark's sample
        self.benchmark, self.sample_id, self.prompt_ids = benchmark_key, sample_id, list(prompt_ids)
        self.prompt_names = dict(prompt_names or {})
        self.title.setText(f"Sample {sample_id}")
        self.target.blockSignals(True)
        self.target.clear()
        self.target.addItem("whole sample", "")
        for pid in prompt_ids:
            self.target.addItem(f"prompt {self.prompt_name(pid)}", pid)
        self.target.blockSignals(False)
        self.note.clear()
        self._set_enabled(self.store is not None)
        self._refresh()

    def _reviewer_edited(self) -> None:
        """Enter in (or leaving) the Reviewer field: the buttons, the queue line and the list's
        verdict column follow the new name at once."""
        who = self.who()
        if who == self._reviewer_shown:
            return
        self._reviewer_shown = who
        self._refresh()
        self.reviewerChanged.emit(who)

    def _store_written_elsewhere(self) -> None:
        store = self.store
        if store is None:
            return
        try:
            version = store.data_version()
        except (MasklensError, OSError):  # e.g. the file went away: said when it is next used
            return
        seen, self._store_version = self._store_version, version
        if seen is not None and version != seen:
            self._refresh()
            self.storeChanged.emit()

    def prompt_name(self, prompt_id: str) -> str:
        """What a prompt is called on screen: its text (and role) when known, else its id."""
        return self.prompt_names.get(prompt_id) or prompt_id

    def shortcut_actions(self) -> list[QAction]:
        """One-key actions (verdict shortcuts and N = next unreviewed) for the main window."""
        actions = []
        for vt in VERDICT_TYPES.values():
            act = QAction(f"Verdict: {vt.label}", self)
            act.setShortcut(QKeySequence(vt.shortcut))
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            act.triggered.connect(lambda _=False, k=vt.key: self.record(k))
            actions.append(act)
        nxt = QAction("Next unreviewed sample", self)
        nxt.setToolTip("the next sample of your queue (when the benchmark is assigned) without your "
                       "verdict or correction; else the next sample without your verdict")
        nxt.setShortcut(QKeySequence("N"))
        nxt.triggered.connect(self.request_next_unreviewed)
        actions.append(nxt)
        undo = QAction("Undo last verdict", self)
        undo.setShortcut(QKeySequence.StandardKey.Undo)  # text fields keep their own Ctrl+Z
        undo.triggered.connect(self.undo)
        actions.append(undo)
        return actions

    # ------------------------------------------------------------ actions
    def record(self, verdict: str) -> Any:
        """Commit a verdict for the current target; returns it (None when nothing is open)."""
        if self.store is None or not self.sample_id:
            self.status.setText("open a benchmark first: verdicts are stored beside its data")
            return None
        try:
            v = self.store.record(
                self.benchmark, self.sample_id, verdict, prompt_id=self.target.currentData() or None,
                note=self.note.text().strip(), reviewer=self.reviewer.text().strip() or None,
            )
        except (MasklensError, OSError) as exc:
            self.status.setText(f"not recorded: {exc}")
            return None
        except Exception as exc:  # noqa: BLE001 - e.g. sqlite3.OperationalError; shown, never a crash
            self.status.setText(f"not recorded: {type(exc).__name__}: {exc}")
            return None
        label = VERDICT_TYPES[verdict].label if verdict else "cleared"
        self.status.setText(f"saved: {label} ({v.time})")
        self.note.clear()
        self.undo_stack.append(v)
        if v.prompt_id:
            self._names[(v.sample_id, v.prompt_id)] = self.prompt_name(v.prompt_id)
        self.undo_button.setEnabled(True)
        self._refresh()
        self.verdictRecorded.emit(self.sample_id)
        self.verdictsChanged.emit([self.sample_id])
        where = f" on {self._prompt_of(v)}" if v.prompt_id else ""
        self.confirmed.emit(f"{label}{where} recorded for sample {v.sample_id} — Ctrl+Z to undo")
        return v

    def record_note(self) -> Any:
        """Enter in the Note field: record the note with this reviewer's current verdict on the target."""
        if not self.note.text().strip():
            return None
        mine = self._mine()
        if mine is None:
            self.status.setText("choose a verdict (button or key): the note is recorded with it")
            return None
        v = self.record(mine)
        back = self._focus_before_note
        if v is not None and back is not None and shiboken6.isValid(back) and back.isVisible():
            back.setFocus(Qt.FocusReason.OtherFocusReason)  # back to the canvas or list: keys work again
        return v

    def _focus_changed(self, old: QWidget | None, new: QWidget | None) -> None:
        if new is self.note and old is not None and shiboken6.isValid(old) and not self.isAncestorOf(old):
            self._focus_before_note = old

    def undo(self) -> Any:
        """Take back the newest verdict of this session: a retraction row is appended to the store."""
        if self.store is None or not self.undo_stack:
            self.status.setText("nothing to undo")
            return None
        v = self.undo_stack[-1]
        if isinstance(v, tuple):
            return self._undo_batch(self.store, v)
        correction = isinstance(v, Correction)  # a ground-truth correction (gui/review/corrections_link.py)
        try:
            (self.store.retract_correction if correction else self.store.retract)(v)
        except Exception as exc:  # noqa: BLE001 - e.g. sqlite3.OperationalError; shown, never a crash
            self.status.setText(f"not undone: {type(exc).__name__}: {exc}")
            return None
        self.undo_stack.pop()
        self.undo_button.setEnabled(bool(self.undo_stack))
        if correction:
            what = f"correction of {v.gt_key} on sample {v.sample_id}"
            self.status.setText(f"undone: {what}")
            self.correctionRetracted.emit(v.sample_id)
            self.confirmed.emit(f"undone: {what}")
            return v
        label = VERDICT_TYPES[v.verdict].label if v.verdict else "clear"
        where = f" on {self._prompt_of(v)}" if v.prompt_id else ""
        self.status.setText(f"undone: {label}{where} on sample {v.sample_id}")
        self._refresh()
        self.verdictRecorded.emit(v.sample_id)
        self.verdictsChanged.emit([v.sample_id])
        self.confirmed.emit(f"undone: {label}{where} on sample {v.sample_id}")
        return v

    def clear(self) -> None:
        self.record("")

    def correction_recorded(self, correction: Correction) -> None:
        """A ground-truth correction recorded with this panel's reviewer and note: Ctrl+Z can take
        it back, the note is used up."""
        self.note.clear()
        self.undo_stack.append(correction)
        self.undo_button.setEnabled(True)
        self.status.setText(f"saved: correction of {correction.gt_key} in sample {correction.sample_id} "
                            f"({correction.time})")

    # ------------------------------------------------------------ batches (the gallery's selection)
    def record_batch(self, sample_ids: list[str], verdict: str) -> list[Any]:
        """One verdict on several whole samples (the gallery's selection): one row per sample in
        the store, as if recorded one by one, in one transaction; one Ctrl+Z undoes the batch."""
        if self.store is None or not sample_ids:
            self.status.setText("open a benchmark and select samples first")
            return []
        try:
            done = self.store.record_many(self.benchmark, sample_ids, verdict,
                                reviewer=self.reviewer.text().strip() or None)
        except Exception as exc:  # noqa: BLE001 - e.g. sqlite3.OperationalError; shown, never a crash
            self.status.setText(f"not recorded (none of the {len(sample_ids)}): {type(exc).__name__}: {exc}")
            return []
        self.undo_stack.append(tuple(done))
        self.undo_button.setEnabled(True)
        label = VERDICT_TYPES[verdict].label if verdict else "cleared"
        text = f"{label} recorded for {len(done)} samples — Ctrl+Z undoes all {len(done)}"
        self.status.setText(text)
        self._refresh()
        self.verdictRecorded.emit(done[-1].sample_id)
        self.verdictsChanged.emit([v.sample_id for v in done])  # one refresh for the whole batch
        self.confirmed.emit(text)
        return done

    def _undo_batch(self, store: ReviewStore, batch: tuple[Any, ...]) -> tuple[Any, ...]:
        """Take back a whole batch: a retraction row for each, in one transaction."""
        try:
            store.retract_many(batch)
        except Exception as exc:  # noqa: BLE001 - shown, never a crash; the batch stays to undo
            self.status.setText(f"not undone: {type(exc).__name__}: {exc}")
            return ()
        self.undo_stack.pop()
        self.undo_button.setEnabled(bool(self.undo_stack))
        label = VERDICT_TYPES[batch[0].verdict].label if batch[0].verdict else "clear"
        text = f"undone: {label} on {len(batch)} samples"
        self.status.setText(text)
        self._refresh()
        self.verdictRecorded.emit(batch[0].sample_id)
        self.verdictsChanged.emit([v.sample_id for v in batch])
        self.confirmed.emit(text)
        return batch


    def request_next_unreviewed(self) -> None:
        self.nextUnreviewedRequested.emit(self.next_unreviewed() or "")

    def my_queue(self) -> list[str]:
        """This reviewer's queue of the assignment in force (`masklens review assign`; [] if none)."""
        if self.store is None or not self.benchmark:
            return []
        return self.store.queue(self.benchmark, self.who())

    def next_unreviewed(self) -> str | None:
        """The first sample after the current one (wrapping) this reviewer has not judged (nor
        corrected): in the reviewer's queue when the benchmark is assigned, else in sample order."""
        if self.store is None:
            return None
        queue = self.my_queue()
        order = queue or self.sample_order
        if not order:
            return None
        done = self.store.reviewed_samples(self.benchmark, reviewer=self.who())
        if queue:  # as `masklens review queue` counts progress: a correction counts too
            done |= {c.sample_id for c in self.store.corrections(self.benchmark, reviewer=self.who())}
        start = order.index(self.sample_id) + 1 if self.sample_id in order else 0
        for sid in order[start:] + order[:start]:
            if sid not in done:
                return sid
        return None

    # ------------------------------------------------------------ view
    def _mine(self) -> str | None:
        """This reviewer's current verdict on the chosen target (sample or prompt), or None."""
        if self.store is None or not self.sample_id:
            return None
        v = self.store.verdict_of(self.benchmark, self.sample_id, self.target.currentData() or None,
                                  reviewer=self.who())
        return v.verdict if v is not None else None

    def _prompt_of(self, v: Any) -> str:
        """A verdict's prompt in words (another sample's verdict, e.g. an undo: its id)."""
        if v.sample_id == self.sample_id:
            return self.prompt_name(v.prompt_id)
        return self._names.get((v.sample_id, v.prompt_id), f"prompt {v.prompt_id}")

    def who(self) -> str:
        """The reviewer recording here: the Reviewer field, else the store's default."""
        return self.reviewer.text().strip() or (self.store.reviewer if self.store else "")

    def _set_enabled(self, on: bool) -> None:
        for w in (*self.buttons.values(), self.clear_button, self.note, self.target):
            w.setEnabled(on)

    def _refresh(self) -> None:
        self.current.clear()
        mine = None
        if self.store is not None and self.sample_id:
            pid = self.target.currentData() or ""
            for v in self.store.sample_current(self.benchmark, self.sample_id):  # this sample's rows only
                label = VERDICT_TYPES[v.verdict].label if v.verdict in VERDICT_TYPES else v.verdict
                where = f" on {self._prompt_of(v)}" if v.prompt_id else ""
                note = f" — {v.note}" if v.note else ""
                self.current.addItem(f"{v.reviewer}: {label}{where}{note}")
                if v.reviewer == self.who() and v.prompt_id == pid:
                    mine = v.verdict
        for key, b in self.buttons.items():
            b.setChecked(key == mine)
        self.next_button.setText("Next in my queue  [N]" if self.my_queue() else "Next unreviewed  [N]")
        self._refresh_agreement()

    def _refresh_agreement(self) -> None:
        if self.store is None or not self.benchmark:
            self.agreement.setText("")
            return
        rows = self.store.stamp()
        key = (id(self.store), self.benchmark, rows)
        if key == self._agreement_key:
            return  # nothing was recorded since: the whole-store summary stands (sample switches)
        self._agreement_key = key
        store, bench = self.store, self.benchmark
        if rows[0] <= INLINE_AGREEMENT_ROWS:
            self.agreement.setText(agreement_text(store, bench))
            return
        from superqt.utils import create_worker

        from masklens.gui.jobs.workers import gui_friendly

        def work() -> str:  # the store's connection is shared under its lock (check_same_thread off)
            with gui_friendly():
                return agreement_text(store, bench)

        def done(text: str) -> None:
            if self._agreement_key == key and shiboken6.isValid(self.agreement):
                self.agreement.setText(text)

        worker = create_worker(work, _start_thread=False, _ignore_errors=True)
        worker.returned.connect(done)
        self._agreement_worker = worker  # kept until the next one
        worker.start()


#: how often the store is asked whether another process wrote to it (milliseconds)
STORE_POLL_MS = 500
#: up to this many rows in the store the agreement line is computed at once, beyond on a thread
INLINE_AGREEMENT_ROWS = 2000


def agreement_text(store: ReviewStore, benchmark: str) -> str:
    """The panel's agreement line over a benchmark's current verdicts (reads the whole store)."""
    from masklens.core.review.agreement import agreement

    ag = agreement(store.current(benchmark))
    if len(ag.reviewers) < 2:
        return f"{ag.items_total} item(s) reviewed" + (f" by {ag.reviewers[0]}" if ag.reviewers else "")
    k = "undefined" if ag.fleiss is None else f"{ag.fleiss:.3f}"
    return (f"{len(ag.reviewers)} reviewers; Fleiss' κ = {k} over the "
            f"{ag.items_complete} item(s) all of them rated")
