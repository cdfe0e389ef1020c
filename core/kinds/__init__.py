"""One package per benchmark kind (the kind class, its file reading, threshold-free stage, metric
functions and report section together), ``common/`` for what several kinds share, and ``demo`` for
the bundled demo files. Each kind is an entry point of the group ``masklens.kinds`` (pyproject.toml,
:mod:`masklens.core.plugins`), as a third-party kind is; its GUI card lives in ``masklens.gui.cards``
(docs/extending.md)."""
