"""What several kinds share: COCO files and RLE ground truth, the linear sum assignment, prefix
unions, confidence intervals, and the cgF1 engine (``cgf1/``) that SA-Co/Gold and CAFE are scored with."""
