"""Segmenters behind one interface, registered by name (see :mod:`.registry`)."""
