"""masklens.core.reports."""
