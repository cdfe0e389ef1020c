"""Dialogs: Open benchmark/predictions, Run benchmark, Export report, Colours, About."""
