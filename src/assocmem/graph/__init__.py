"""The declared graph: `declare` writes it, `traverse` follows it, `reconstruct` reads with it."""
