"""`Memory`'s operations, grouped by capability: each group is a mixin over the state
`operations.base` declares, and `Memory` composes them (the API tier)."""
