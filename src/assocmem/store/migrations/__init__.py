"""Named, ordered schema migrations, shipped as SQL files per backend: the engine's
here, each capability's in its own folder (``<capability>/migrations/<backend>/``).

Invariant: a migration and the row recording it commit in one transaction, so
a store is never half-migrated; a store that records a migration this code does
not know was written by a newer assocmem and is refused. Names are unique across
the engine and every part, and all of them apply in name order, so a migration
that moved between folders keeps its name and is never applied twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources


def migrations(backend: str, packages: Sequence[str] = ()) -> list[tuple[str, str]]:
    """``(name, sql)`` of every migration for ``backend`` of the engine and of the parts
    whose ``packages`` hold a ``migrations`` folder, in the order to apply."""
    folders = [resources.files(__name__).joinpath(backend)]
    folders += [resources.files(p).joinpath("migrations", backend) for p in packages]
    found: dict[str, str] = {}
    for folder in folders:
        if not folder.is_dir():
            continue
        for f in folder.iterdir():
            if f.name.endswith(".sql"):
                name = f.name.removesuffix(".sql")
                if name in found:
                    raise RuntimeError(f"two {backend} migrations are named {name!r}")
                found[name] = f.read_text(encoding="utf-8")
    return sorted(found.items())
