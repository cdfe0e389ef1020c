"""Squares: a small benchmark kind added the way docs/extending.md describes (one folder: the kind,
its metrics, its report section), installed from the tests folder through the registry."""
