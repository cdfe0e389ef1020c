"""Ground-truth correction on the canvas: a Qt-free edit session (:mod:`.session`), its overlay
(:mod:`.overlay`), the Correct-mode tools (:mod:`.tool`) and model-assisted proposals (:mod:`.assist`)."""
