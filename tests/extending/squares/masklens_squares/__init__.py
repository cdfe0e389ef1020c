"""Squares: a small benchmark kind packaged the way docs/extending.md describes — a package of its
own (the kind, its metrics, its report section, its readout card) whose pyproject.toml declares
masklens entry points; masklens finds it once the package is installed."""
