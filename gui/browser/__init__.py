"""The sample browser: the table model, its filter/sort proxy, the filter language and presets."""
