"""masklens.core: the headless half of masklens (scorer, loaders, models, caches, review, reports).

Nothing in this package imports Qt, and heavy libraries (torch, transformers, sam2)
are imported lazily inside the functions that need them.
"""

__version__ = "0.1.0"
