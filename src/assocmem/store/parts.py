"""How a capability's part joins the store: its migrations, and what the engine calls it for.

A part is a mixin over the shared engine (`SQLStore`) that lives in its capability's
folder with its SQL for both dialects, and declares a `StorePart` as its class
attribute ``part``. The store a `Memory` opens is the engine with every registered
part mixed in (`assocmem.capabilities`).

Invariant: the engine never names a part's tables. Where its own operations touch
what a part keeps (a write counts co-occurrence, a forget takes a memory's credits
with it), it calls the hooks the parts declare, inside its own write transaction, in
the order the parts are registered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from assocmem.store.rows import View
from assocmem.types import Record, Scope


class Written(NamedTuple):
    """One memory a write stored, as the write hooks see it."""

    seq: int
    layer: int
    concepts: Sequence[int]  # its concept ids, in text order
    vector: Any = None  # its embedding (a numpy row) when the write carried vectors


@dataclass(frozen=True)
class ByConcept:
    """A table that refers to concepts, as the refold re-keys it when two concept names
    merge: ``key`` the columns that with ``concept`` identify a row, ``summed`` the
    columns merged rows add up, ``latest`` those merged rows take the maximum of."""

    concept: str = "concept_id"
    key: tuple[str, ...] = ()
    summed: tuple[str, ...] = ()
    latest: tuple[str, ...] = ()


@dataclass(frozen=True)
class StorePart:
    """What one capability adds to the store beyond its own methods.

    Every hook takes the store first and runs inside the engine's write transaction.
    """

    name: str
    # The package whose ``migrations/sqlite`` and ``migrations/postgres`` folders hold
    # the part's named migrations (applied with the engine's, in name order).
    migrations: str | None = None
    # The tables the part keeps, whichever migration created them: no SQL outside the
    # part's folder names them (`tests/test_layout.py`).
    tables: tuple[str, ...] = ()
    # The part's own state on a new connection (its queues, its caches).
    on_init: Callable[[Any], None] | None = None
    # Once per open, after the migrations, under the lock that serialises them: bring
    # the part's rows to this code's rules (idempotent); ``is_current`` answers in one
    # cheap lookup whether there is nothing to do.
    on_open: Callable[[Any], object] | None = None
    is_current: Callable[[Any], bool] | None = None
    # An outermost write transaction is about to begin (before it takes the lock).
    before_begin: Callable[[Any], None] | None = None
    # An outermost write transaction began (the part may add its queued writes), and
    # committed; the store is closing (the part keeps what it queued).
    on_begin: Callable[[Any], None] | None = None
    on_commit: Callable[[Any], None] | None = None
    on_close: Callable[[Any], None] | None = None
    # A transaction (``level`` 0) or a savepoint (its level) is being rolled back:
    # state the part keeps of rows written in it goes.
    on_rollback: Callable[[Any, int], None] | None = None
    # Bring state the part buffers into its tables before the engine reads, re-keys or
    # deletes what refers to memories or concepts.
    settle: Callable[[Any], None] | None = None
    # A write stored these memories (and their concept rows); ``at`` in microseconds.
    on_write: Callable[[Any, Sequence[Written], int], None] | None = None
    # A memory (seq, layer) is about to be deleted for good: what the part keeps of it goes.
    on_forget: Callable[[Any, int, int], None] | None = None
    # After a forget, given the agent's layers: these concepts of the forgotten memories
    # are carried by no memory of the agent any more.
    after_forget: Callable[[Any, Sequence[int], Sequence[int]], None] | None = None
    # After a forget, given the agent's layers: the names of concepts nothing refers to
    # any more were erased.
    on_erase: Callable[[Any, Sequence[int], Sequence[str]], None] | None = None
    # A memory (seq) moved from one layer to another (an update of its access).
    on_move: Callable[[Any, int, int, int], None] | None = None
    # A read's gates: which of these memories may drive an action (a read asking
    # ``influence_only``, ``strict``: origins counted strictly); folds of the score the
    # part puts on derived candidates (seq -> {fold: factor}, asked only when the pool
    # holds derived memories); the returned records with the part's marks set.
    influence: Callable[[Any, Scope, Sequence[int], bool], set[int]] | None = None
    derived_folds: (
        Callable[[Any, View, Mapping[int, Record]], Mapping[int, Mapping[str, float]]] | None
    ) = None
    mark: Callable[[Any, Mapping[int, Record]], Mapping[int, Record]] | None = None
    # Concepts merge in a refold (old id -> kept id, also in the temporary table
    # ``refold_map``): called before the engine re-keys the memories' concept rows.
    on_merge: Callable[[Any, Mapping[int, int]], None] | None = None
    # ``(table, column)`` of the part that hold concept ids: a concept's name is erased
    # only when none of them, and no memory, refers to it.
    concept_refs: tuple[tuple[str, str], ...] = ()
    # Tables of the part keyed by concept that a refold merges row by row.
    by_concept: Mapping[str, ByConcept] | None = None
    # A store_info ``key`` was set to ``value`` (after the setting's own transaction).
    on_info: Callable[[Any, str, str], None] | None = None
    # The backend made a database extension available (its name), once per open under
    # the lock that serialises migrations: the part adds what uses it to its tables.
    on_extension: Callable[[Any, str], None] | None = None
    # Tables of the part a backend treats alike with the engine's own: those many
    # stores never fill that a read asks (`_empty`: checked for a first row as a read
    # snapshot begins, where the backend does); those a forget deletes rows from
    # (rewritten where the backend scrubs a forget's bytes from its files); those
    # every write grows (their planner statistics refreshed as they grow).
    empty_checked: tuple[str, ...] = ()
    forget_tables: tuple[str, ...] = ()
    grown_tables: tuple[str, ...] = ()
    # The part's counts in a scope's `stats`, given the condition ``where`` on a table's
    # ``scope_id`` that selects the scope's layers, and its parameters (the layers).
    stats: Callable[[Any, str, Sequence[int]], Mapping[str, int]] | None = None


# What `parts_of` and `hooks_of` found, per store class (the classes are few: each
# backend's engine, alone or with the parts mixed in).
_PARTS: dict[type, tuple[StorePart, ...]] = {}
_HOOKS: dict[tuple[type, str], tuple[Callable[..., Any], ...]] = {}


def parts_of(cls: type) -> tuple[StorePart, ...]:
    """The parts mixed into ``cls``, in registration order (its bases left to right);
    found once per class."""
    if cls not in _PARTS:
        _PARTS[cls] = tuple(c.__dict__["part"] for c in cls.__mro__ if "part" in c.__dict__)
    return _PARTS[cls]


def hooks_of(cls: type, name: str) -> tuple[Callable[..., Any], ...]:
    """The hooks called ``name`` of the parts mixed into ``cls``, skipping the parts
    without one; found once per class, as a write calls several."""
    if (cls, name) not in _HOOKS:
        found = (getattr(part, name) for part in parts_of(cls))
        _HOOKS[cls, name] = tuple(hook for hook in found if hook is not None)
    return _HOOKS[cls, name]


def tables(parts: Sequence[StorePart], kind: str) -> tuple[str, ...]:
    """The parts' tables of one kind (``empty_checked``, ``forget_tables``,
    ``grown_tables``), in registration order."""
    found: list[str] = []
    for part in parts:
        names: tuple[str, ...] = getattr(part, kind)
        found += names
    return tuple(found)


def by_concept(parts: Sequence[StorePart]) -> dict[str, ByConcept]:
    """Every part's tables that refer to concepts."""
    return {table: how for part in parts for table, how in (part.by_concept or {}).items()}
