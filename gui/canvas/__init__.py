"""The image canvas: zoom/pan view, overlay compositing, image and mask caches, the panels of a
sample view, visual prompts (boxes and points)."""
