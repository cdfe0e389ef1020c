"""Reviewers' verdicts and ground-truth corrections: the SQLite store, verdict types, corrections,
team queues, agreement (κ), and the integrity check."""
