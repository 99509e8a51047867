"""Named, ordered schema migrations, shipped as SQL files per backend.

Invariant: a migration and the row recording it commit in one transaction, so
a store is never half-migrated; a store that records a migration this code does
not know was written by a newer assocmem and is refused.
"""

from __future__ import annotations

from importlib import resources


def migrations(backend: str) -> list[tuple[str, str]]:
    """``(name, sql)`` of every migration for ``backend``, in the order to apply."""
    folder = resources.files(__name__).joinpath(backend)
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".sql")), key=lambda f: f.name)
    return [(f.name.removesuffix(".sql"), f.read_text(encoding="utf-8")) for f in files]
