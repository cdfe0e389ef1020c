"""The interpreter's tuning for bulk work: Python's cyclic garbage collector paused while
bulk-building acyclic objects, and the GIL's switch interval shortened while a worker thread runs
Python beside a GUI thread. The one module that changes either.

Garbage collector.

Loading a benchmark allocates hundreds of thousands of dicts, lists and masks that form no
reference cycles; every 700 allocations the collector walks the young objects and, as they
survive, repeatedly the old ones — a third of the load time on SA-Co/Gold-sized files.
:func:`gc_paused` turns automatic collection off for the duration and restores it after
(nested and thread-safe: collection is back on when the last pause ends).

Turned back on, the collector would walk every object made during the pause once (the young
generation's count is far past its threshold): ~0.3 s at 100 000 records. When the pause made
many objects and nothing is frozen (``gc.get_freeze_count() == 0``, so no one else's
``gc.freeze`` is undone), the pause ends with ``gc.freeze(); gc.unfreeze()``: every tracked
object moves to the oldest generation without being walked, and the young count starts
from zero. Nothing leaves the collector: a cycle made later is collected as usual, and a
cycle among the moved objects by the next full collection (or ``gc.collect()``). A
``gc.freeze`` another thread makes between the check and the move is undone: its objects are
walked again by later full collections (time, never correctness).

``gc.get_freeze_count()`` counts the frozen objects one by one (~0.1 s at a million, a GUI stall
when a pause ended on the GUI thread): once something is frozen — by :func:`freeze` here, or as
the check found — nothing is promoted any more and the count is not taken again. (An
``gc.unfreeze`` elsewhere after that leaves the young objects to the collector, as usual.)

Switch interval. Every Qt virtual call on a Python-made widget takes the GIL: with a worker
thread busy in Python, each take waits up to one interval (Python's default 5 ms), so a repaint
(hundreds of takes) froze the window for hundreds of ms. :func:`shorten_switch_interval` sets
:data:`WORKER_SWITCH_INTERVAL` while any worker runs (counted: the first saves the interval, the
last gives it back)."""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False
_frozen = False  # something is frozen (then it stays so: nothing here unfreezes what others froze)


def freeze() -> None:
    """``gc.freeze()``, remembered: later pauses need not count the frozen objects."""
    global _frozen
    gc.freeze()
    _frozen = True


def _promote_if_bulk() -> None:
    """Move every tracked object to the oldest generation (unwalked) when the young
    generation holds more than ten of its collections' worth and nothing is frozen."""
    global _frozen
    young = gc.get_threshold()[0]
    if not young or _frozen or gc.get_count()[0] <= 10 * young:
        return
    if gc.get_freeze_count() != 0:  # one by one: taken until something is seen frozen
        _frozen = True
        return
    gc.freeze()
    gc.unfreeze()


@contextmanager
def gc_paused() -> Iterator[None]:
    """Automatic garbage collection off inside the block (reference counting still frees)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                _promote_if_bulk()
                gc.enable()


@contextmanager
def collected_later() -> Iterator[None]:
    """:func:`gc_paused` for a block whose results are long-lived (a loaded model, a benchmark's
    readouts): what survives is frozen after (:func:`freeze`), so no later full collection walks
    it with the GIL held. Frozen objects are still freed by reference counting when dropped."""
    with gc_paused():
        try:
            yield
        finally:
            freeze()


#: the switch interval while a worker thread runs beside the GUI thread (seconds)
WORKER_SWITCH_INTERVAL = 0.0005
_switch_lock = threading.Lock()
_switch_users = 0
_saved_interval = 0.005


def shorten_switch_interval() -> None:
    """A worker starts: the GIL changes hands every :data:`WORKER_SWITCH_INTERVAL` (or sooner, if
    it already did) until the last worker calls :func:`restore_switch_interval`."""
    global _switch_users, _saved_interval
    with _switch_lock:
        if _switch_users == 0:
            _saved_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(_saved_interval, WORKER_SWITCH_INTERVAL))
        _switch_users += 1


def restore_switch_interval() -> None:
    """A worker ended: the interval it found is back once no worker runs."""
    global _switch_users
    with _switch_lock:
        _switch_users = max(_switch_users - 1, 0)
        if _switch_users == 0:
            sys.setswitchinterval(_saved_interval)
