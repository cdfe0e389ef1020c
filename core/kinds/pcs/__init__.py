"""SA-Co/Gold (promptable concept segmentation, cgF1): kind, bulk threshold-free stage, records, report."""
