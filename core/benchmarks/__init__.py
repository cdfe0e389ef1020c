"""Loaders, one module per release format; each defines ``KIND`` (see masklens.core.scoring)."""
