"""CGEBench (hypernym levels p0…p3): loader, IoGT and cumulative intersection, report."""
