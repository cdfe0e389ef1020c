"""Ways out of masklens into the tools researchers already use: COCO JSON (ground truth and
results files pycocotools reads), a FiftyOne dataset directory, per-sample CSV, and benchmark
files fetched from the Hugging Face Hub (``hf://datasets/OWNER/NAME/path``).

Qt-free; :func:`masklens.core.interop.export.export` is what ``masklens export`` calls.
"""
