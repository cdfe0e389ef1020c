"""Batch reports: paper-style tables per benchmark kind, plots, threshold sweeps, failure
galleries, model comparisons, reviewers' verdicts and provenance, written atomically as
``report.html`` (self-contained), ``summary.csv``, ``samples.csv`` and ``summary.json``."""

from masklens.core.reports.build import FILES, ReportOptions, build_report

__all__ = ["FILES", "ReportOptions", "build_report"]
