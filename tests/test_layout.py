"""The one rule of the arrows (docs/architecture.md): imports point down, never up.

Reads every module's imports (top-level and function-local alike) and fails on an
arrow from a lower tier to a higher one, or from an adapter past the public API.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "assocmem"

FOUNDATIONS = ("assocmem.errors", "assocmem.types", "assocmem.schema", "assocmem.text",
               "assocmem.optional", "assocmem.paths", "assocmem.progress",
               "assocmem.order")  # fmt: skip
STORE = ("assocmem.store",)
ROOMS = ("assocmem.write", "assocmem.recall", "assocmem.links", "assocmem.graph",
         "assocmem.lifecycle", "assocmem.vectors", "assocmem.ingest", "assocmem.vault",
         "assocmem.trust", "assocmem.consolidate", "assocmem.procedures",
         "assocmem.inspect", "assocmem.portable")  # fmt: skip
# A capability's operations (`<room>/operations.py`) are part of `Memory`: the API tier,
# though they live in the capability's folder.
API = (
    "assocmem.capabilities",
    "assocmem.memory",
    "assocmem.operations",
    "assocmem.pool",
    "assocmem.surface",
    "assocmem.config",
    "assocmem.testing",
    *(f"assocmem.{p.parent.name}.operations" for p in sorted(PACKAGE.glob("*/operations.py"))),
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
# Each capability's result types (`<room>/types.py`), public names every surface returns:
# plain dataclasses over the foundations, so a client needs nothing else of the room.
RESULT_TYPES = tuple(f"assocmem.{p.parent.name}.types" for p in sorted(PACKAGE.glob("*/types.py")))


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
    for tier in (FOUNDATIONS, STORE, API, ROOMS, ADAPTERS):  # a room's operations: API
        if _within(module, tier):
            return tier
    return None


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_result_types_stand_on_the_foundations_only() -> None:
    # What a client imports to read results must not pull a room's logic or the store.
    for module in RESULT_TYPES:
        path = PACKAGE / module.split(".")[1] / "types.py"
        assert all(_within(m, FOUNDATIONS + RESULT_TYPES) for m in _imports(path)), module


def test_every_module_has_a_tier() -> None:
    loose = {_module(p) for p in MODULES} - {"assocmem", "assocmem.__main__", "assocmem.demo"}
    assert [m for m in sorted(loose) if _tier(m) is None] == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _module(p))
def test_imports_point_down(path: Path) -> None:
    module = _module(path)
    tier = _tier(module)
    if tier is None:
        return  # the package itself, __main__ and the demo sit above everything
    allowed = PUBLIC + RESULT_TYPES if tier is ADAPTERS else ALLOWED[tier]
    # The package itself (its public names) is above every tier but the adapters.
    upward = sorted(
        m for m in _imports(path)
        if (m == "assocmem" and tier is not ADAPTERS)
        or (m != "assocmem" and not _within(m, allowed))
        or (tier is not ADAPTERS and _tier(m) is API and tier is not API)
    )  # fmt: skip
    assert upward == [], f"{module} imports what its tier may not: {upward}"


# -- one capability, one folder ------------------------------------------------------


def _folder(module: str) -> str:
    """The folder a module belongs to: ``assocmem.trust.slash`` -> ``trust``; the
    package's own top-level modules are each a folder of their own. A capability's
    operations sit with the API tier (they compose `Memory`), so they are counted
    there: the arrows between folders are the rooms' own."""
    if _tier(module) is API:
        return "API tier"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _folder_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in MODULES:
        here = _folder(_module(path))
        for imported in _imports(path):
            there = _folder(imported)
            if there != here and imported != "assocmem":
                graph.setdefault(here, set()).add(there)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of ``graph`` (its folders in order, the first repeated last), or []."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_no_folder_imports_itself_back() -> None:
    # A folder that another folder's import leads back to cannot be read, tested or
    # changed on its own: the arrows between folders form no cycle.
    assert _cycle(_folder_graph()) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}}) == []


def test_no_import_is_renamed() -> None:
    # An import renamed on the way in lets an old name live on beside the module's
    # own; numpy's `np` is the one alias the field reads as the name itself.
    renamed = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    conventional = (alias.name, alias.asname) == ("numpy", "np")
                    if alias.asname and alias.asname != alias.name.split(".")[-1]:
                        if not conventional:
                            renamed.append(f"{_module(path)}: {alias.name} as {alias.asname}")
    assert renamed == []


def _store_interface() -> list[str]:
    tree = ast.parse((PACKAGE / "store" / "protocol.py").read_text(encoding="utf-8"))
    store = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Store")
    return [f.name for f in store.body if isinstance(f, ast.FunctionDef)]


def test_the_core_store_interface_stays_small() -> None:
    # Everything a capability asks of the store beyond the memory rows is its part's
    # own method, in its folder; the interface every room shares stays a page long.
    assert len(_store_interface()) <= 30, _store_interface()


# The engine's base class: its private helpers (``_query``, ``_layers``, the dialect's
# ``_condition_sql``…) are what every mixin is built on.
BASE = PACKAGE / "store" / "connection.py"


@functools.cache
def _defined_methods(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        f.name
        for c in tree.body
        if isinstance(c, ast.ClassDef)
        for f in c.body
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _mixins() -> list[Path]:
    """The modules that define a mixin of the store: the engine's and every part's."""
    found = []
    for path in MODULES:
        text = path.read_text(encoding="utf-8")
        if "(SQLStore):" in text or "(SQLConnection):" in text:
            found.append(path)
    return found


@pytest.mark.parametrize("path", _mixins(), ids=lambda p: _module(p))
def test_no_mixin_calls_another_s_private_method(path: Path) -> None:
    # A part reaches another part, or the engine's other mixins, through their public
    # methods and the hooks of `StorePart`, never through their private ones.
    allowed = _defined_methods(path) | _defined_methods(BASE)
    if path.parent.name == "store" and path.stem in ("sqlite", "postgres"):
        # A backend is the engine in one dialect: it fills in the engine's own steps.
        allowed |= {m for p in (PACKAGE / "store").glob("*.py") for m in _defined_methods(p)}
    calls = {
        node.func.attr
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in ("self", "store")
        and node.func.attr.startswith("_")
        and not node.func.attr.startswith("__")
    }
    assert sorted(calls - allowed) == []


# -- a capability's SQL lives in its folder ----------------------------------------------

_CREATES = re.compile(
    r"CREATE\s+(?:VIRTUAL\s+|UNLOGGED\s+)?(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.I
)
_NAMES = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE|EXISTS\s*\(\s*SELECT\s+1\s+FROM)\s+(\w+)")


def _migration_folders() -> dict[str, list[Path]]:
    """Each folder's migration files (the engine's under ``store``)."""
    found: dict[str, list[Path]] = {}
    for path in sorted(PACKAGE.glob("*/migrations/*/*.sql")):
        found.setdefault(path.relative_to(PACKAGE).parts[0], []).append(path)
    return found


@functools.cache
def _owners() -> dict[str, str]:
    """Table -> the folder that keeps it: the part that declares it among its
    ``tables``, else the folder whose migrations create it."""
    from assocmem.capabilities import Parts

    owners: dict[str, str] = {}
    for folder, paths in _migration_folders().items():
        for path in paths:
            for table in _CREATES.findall(path.read_text(encoding="utf-8")):
                owners.setdefault(table.lower(), folder)
    for cls in Parts.__mro__:
        part = cls.__dict__.get("part")
        for table in part.tables if part is not None else ():
            owners[table] = cls.__module__.split(".")[1]
    return owners


def _sql_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module (f-strings' literal parts too), with lines."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.lineno, node.value))
    return found


def test_every_table_has_one_keeper() -> None:
    owners = _owners()
    # The engine's own rows, and every part's tables, are known by name.
    assert {"memories", "concepts", "links", "trust_credits", "vault_notes"} <= set(owners)
    assert owners["memories"] == "store" and owners["links"] == "links"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _module(p))
def test_sql_naming_a_capability_s_table_lives_in_its_folder(path: Path) -> None:
    # What a capability keeps is read and written by its own part; another folder asks
    # it through the part's methods or the engine's hooks. The engine's own tables
    # (memories, concepts, scopes…) are every part's to read.
    owners = _owners()
    here = _folder(_module(path))
    foreign = sorted(
        f"{line}: {table}"
        for line, text in _sql_strings(path)
        if re.search(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP)\b", text)
        for table in _NAMES.findall(text)
        if owners.get(table.lower(), "store") not in ("store", here)
    )
    assert foreign == []
