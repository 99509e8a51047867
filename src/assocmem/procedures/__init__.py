"""The procedures room: what repeated use earns (issue 18) — candidate procedures and
their promotion gate, and the graduation of corroborated episodes to semantic."""
