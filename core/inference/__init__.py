"""Running models over a benchmark: the runner (one process, shards, Ray), prediction files
written in each kind's format, shard merge, and evaluate (predict, then score)."""
