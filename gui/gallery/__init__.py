"""The failure gallery: a virtualised grid of thumbnails over the sample list's own filter, sort
and selection, with batch verdicts (:class:`masklens.gui.gallery.tab.GalleryTab`, a tab of the window)."""
