"""all-MiniLM-L6-v2 as an int8 ONNX graph and its tokenizer, shipped ready to run."""

from __future__ import annotations

from pathlib import Path

__all__ = ["MODEL_ID", "folder"]

# What assocmem records in a store filled by this form.
MODEL_ID = "all-MiniLM-L6-v2/onnx-int8"


def folder() -> Path:
    """The folder holding ``model.onnx`` and ``tokenizer.json``."""
    return Path(__file__).resolve().parent
