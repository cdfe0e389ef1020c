"""Compare sets: several prediction sets side by side, their cards and session memory."""
