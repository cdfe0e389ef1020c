"""The failure gallery: a virtualised grid of thumbnails over the sample list's own filter, sort
and selection, with batch verdicts (:func:`masklens.gui.gallery.tab.install` adds the tab)."""
