"""Benchmarks for assocmem, run through `assocmem bench ...`."""
