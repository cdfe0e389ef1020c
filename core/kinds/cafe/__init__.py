"""CAFE (counterfactual attribute edits): loader, pair classes (TA/UA), SA-Co metrics per group, report."""
