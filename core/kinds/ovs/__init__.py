"""The mask-wise open-vocabulary segmentation protocol: loader, τ* / front / back / err / AUC, report."""
