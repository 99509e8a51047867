"""Inspection: what an operator (and the web dashboard) looks at, not what an agent
recalls. Pages of memories newest first (`browse`), one record with its history,
feedback, mentions and relations (`record`), and the store's health (`health`).

Invariant: everything here reads only the caller's scope layers and writes nothing.
"""
