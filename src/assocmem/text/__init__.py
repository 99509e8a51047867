"""Text as the memory reads it: concepts (normalise, fold, extract), stored times,
sources. Pure functions.
"""
