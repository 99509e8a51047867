"""Writing: raw fields checked into a `NewMemory` before anything reaches the store."""
