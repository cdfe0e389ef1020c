"""The Review dock: verdicts on a sample or a prompt with one key."""
