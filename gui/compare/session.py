"""Session memory of the Compare sets tab (a mixin of :class:`~masklens.gui.compare.sets.SetComparison`):
per benchmark, the prediction files attached, the ticked sets, the active set, the failure filter
and the tab shown, in ``Settings.sessions`` (the :data:`MAX_SESSIONS` most recent benchmarks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: benchmarks whose compared sets the settings remember
MAX_SESSIONS = 20


class SessionMemory:
    """Uses the comparison's ``w`` (the window), ``ticked``, ``failure()`` and ``_pending``."""

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
        if self.failure() is not None:
            entry["failure"] = self.failure().label
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

