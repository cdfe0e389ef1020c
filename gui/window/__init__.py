"""The main window: its composition, commands and drawing, named slots for the features' actions,
the readout panel (sliders and the kind's card), status bar, message bar, view toolbar, key scope and Help."""
