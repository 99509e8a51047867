"""What the declared graph reports: entities, relations, traversals and reconstructions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assocmem.types import Plain


@dataclass(frozen=True)
class Relation(Plain):
    """A declared relation. Endpoints read as an entity's canonical name or ``mem:<id>``;
    ``anchor`` is the record that evidences it (``mem:<id>``) or None."""

    id: int
    subject: str
    predicate: str
    object: str
    declared_by: str
    declared_at: str
    anchor: str | None = None


@dataclass(frozen=True)
class Entity(Plain):
    """An entity in a traversal: how many hops from the start, through which relation,
    and the readable records that mention it (``refs_cut`` counts those left out)."""

    id: int
    name: str
    aliases: tuple[str, ...]
    declared_by: str
    hops: int
    via: int | None
    refs: tuple[str, ...]
    refs_cut: int = 0


@dataclass(frozen=True)
class Traversal(Plain):
    """An entity's neighbourhood: entities in walk order, the relations between them,
    and what the bounds cut."""

    entities: tuple[Entity, ...]
    relations: tuple[Relation, ...]
    cut: dict[str, int]


@dataclass(frozen=True)
class Evidence(Plain):
    """A record a reconstruction attached to an item: reached by a relation walk (``hops``
    ≥ 1) or bundled by a record-to-record relation (``hops`` None)."""

    ref: str
    text: str
    why: str
    hops: int | None = None
    independence_reason: str | None = None


@dataclass(frozen=True)
class Role(Plain):
    """A role-vocabulary relation between two records, subject first as declared."""

    role: str
    subject: str
    object: str
    relation: int


@dataclass(frozen=True)
class Reconstructed(Plain):
    """One reconstructed item: a directly retrieved record with its evidence (records a
    declared relation bundled into it, and records the walk reached) and roles."""

    ref: str
    text: str
    score: float
    source: str
    evidence: tuple[Evidence, ...] = ()
    roles: tuple[Role, ...] = ()


@dataclass(frozen=True)
class Reconstruction(Plain):
    """The items of a reconstructive recall and the bounds it met (``omitted`` counts
    records the walk reached but did not keep; ``reached`` names limits that were hit)."""

    items: tuple[Reconstructed, ...]
    bounds: dict[str, Any]
