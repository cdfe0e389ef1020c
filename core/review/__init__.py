"""Reviewers' verdicts: the SQLite store, verdict types, agreement (κ), and the integrity check."""
