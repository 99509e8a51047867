"""The procedures room: what repeated use earns — candidate procedures and
their promotion gate, and the graduation of corroborated episodes to semantic."""
