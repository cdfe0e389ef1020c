"""The scorer contract: :class:`~masklens.core.scoring.contract.BenchmarkKind`, the kind registry,
the Scorer and its results; per-sample records and readouts, the kinds' file arguments, batched
IoU, terminal tables."""
