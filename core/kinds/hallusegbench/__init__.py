"""HalluSegBench (factual/counterfactual pairs): loader, ΔIoU / CMS / CCMS, report."""
