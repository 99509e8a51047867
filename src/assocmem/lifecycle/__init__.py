"""Lifecycle: archive, restore, protect, supersession history, contradictions and retention."""
