"""Background work: job functions (no widgets), the worker pool with cancel, slider re-scoring."""
