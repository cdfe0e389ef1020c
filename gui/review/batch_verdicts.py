"""One verdict on several whole samples (the gallery's selection), and its one-key undo: a mixin
of :class:`~masklens.gui.review.panel.ReviewPanel`."""

from __future__ import annotations

from typing import Any

from masklens.core.review.verdict_types import VERDICT_TYPES


class BatchVerdicts:
    """Needs the panel's store, benchmark, reviewer field, status line, undo stack and signals."""

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

    def _undo_batch(self, batch: tuple[Any, ...]) -> tuple[Any, ...]:
        """Take back a whole batch: a retraction row for each, in one transaction."""
        try:
            self.store.retract_many(batch)
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
