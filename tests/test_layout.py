"""The one rule of the arrows (docs/architecture.md): imports point down, never up.

Reads every module's imports (top-level and function-local alike) and fails on an
arrow from a lower tier to a higher one, or from an adapter past the public API.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "assocmem"

FOUNDATIONS = ("assocmem.errors", "assocmem.types", "assocmem.schema", "assocmem.text",
               "assocmem.optional", "assocmem.paths", "assocmem.progress")  # fmt: skip
STORE = ("assocmem.store",)
ROOMS = ("assocmem.write", "assocmem.recall", "assocmem.links", "assocmem.graph",
         "assocmem.lifecycle", "assocmem.vectors", "assocmem.ingest", "assocmem.vault",
         "assocmem.trust", "assocmem.consolidate", "assocmem.procedures",
         "assocmem.inspect", "assocmem.portable")  # fmt: skip
API = (
    "assocmem.capabilities",
    "assocmem.memory",
    "assocmem.operations",
    "assocmem.pool",
    "assocmem.surface",
    "assocmem.config",
    "assocmem.testing",
)
ADAPTERS = ("assocmem.adapters",)

# What each tier may import from the package (besides itself).
ALLOWED: dict[tuple[str, ...], tuple[str, ...]] = {
    FOUNDATIONS: FOUNDATIONS,
    STORE: FOUNDATIONS + STORE,
    ROOMS: FOUNDATIONS + STORE + ROOMS,
    API: FOUNDATIONS + STORE + ROOMS + API,
}
# Adapters speak to the memory only through its public API (and the pure foundations);
# they never reach into a room or the store.
PUBLIC = FOUNDATIONS + API + ("assocmem.demo",) + ADAPTERS


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    here = _module(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
    return {m for m in found if m == "assocmem" or m.startswith("assocmem.")}


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _tier(module: str) -> tuple[str, ...] | None:
    for tier in (FOUNDATIONS, STORE, ROOMS, API, ADAPTERS):
        if _within(module, tier):
            return tier
    return None


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_tier() -> None:
    loose = {_module(p) for p in MODULES} - {"assocmem", "assocmem.__main__", "assocmem.demo"}
    assert [m for m in sorted(loose) if _tier(m) is None] == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _module(p))
def test_imports_point_down(path: Path) -> None:
    module = _module(path)
    tier = _tier(module)
    if tier is None:
        return  # the package itself, __main__ and the demo sit above everything
    allowed = PUBLIC if tier is ADAPTERS else ALLOWED[tier]
    # The package itself (its public names) is above every tier but the adapters.
    upward = sorted(
        m for m in _imports(path)
        if (m == "assocmem" and tier is not ADAPTERS)
        or (m != "assocmem" and not _within(m, allowed))
    )  # fmt: skip
    assert upward == [], f"{module} imports what its tier may not: {upward}"
