"""SAM 3's cgF1 family (pmF1 × IL_MCC) over image entries: COCO results I/O, one-to-one matching,
per-entry tables, running sums and summaries. Shared by the SA-Co/Gold (``pcs``) and CAFE kinds."""
