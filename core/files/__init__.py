"""Reading and writing files safely: atomic writes, JSON with clear errors, input limits, the
guarded path resolver, image decoding, RLE validation, safe CSV, SQLite error messages, temp
leftovers. The lowest layer above :mod:`masklens.core.errors`: it imports nothing from the
layers above it (import-linter contracts in pyproject.toml)."""
