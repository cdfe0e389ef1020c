"""One package per benchmark kind (the kind class, its file reading, threshold-free stage, metric
functions and report section together), ``common/`` for what several kinds share, and ``demo`` for
the bundled demo files. A kind is registered in :mod:`masklens.core.scoring.contract`; its GUI card
lives in ``masklens.gui.cards`` (docs/extending.md)."""
