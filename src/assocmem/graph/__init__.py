"""The declared graph: entities, aliases, mentions and relations; traversal and reconstruction."""
