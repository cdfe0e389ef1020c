"""masklens.gui: the PySide6 inspection window. The only package that imports Qt."""
