"""Caches of model work: image encodings in memory, predictions on disk (SQLite, also on a network
filesystem), and `masklens cache info|clear`."""
