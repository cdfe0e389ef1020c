"""The process around the scorer: the log file, optional extras and their install hints, the GC
pause for bulk loading, the desktop entry."""
