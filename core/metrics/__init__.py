"""Metric families, one module per benchmark family: pure functions on numbers and arrays."""
