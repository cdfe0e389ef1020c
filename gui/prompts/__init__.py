"""Typed prompts: the prompt bar, the model's options dialog, the list of typed-prompt layers."""
