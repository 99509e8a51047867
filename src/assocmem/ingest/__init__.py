"""Ingest helpers: turning outside formats into writes."""
