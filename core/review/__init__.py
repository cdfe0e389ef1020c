"""Reviewers' verdicts and ground-truth corrections: the SQLite store and the one way to open it
(:func:`~masklens.core.review.store.open_store` with a read or write role), verdict types,
corrections and their recorder, team queues, agreement (κ), and the integrity check."""
