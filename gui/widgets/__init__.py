"""Small reusable widgets: a combo box sized to its item, keyboard steps for float sliders."""
