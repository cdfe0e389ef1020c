"""The main window: its composition, commands (actions), drawing, the readout panel (sliders and
the kind's card), status bar, message bar, view toolbar, key scope and optional integrations."""
