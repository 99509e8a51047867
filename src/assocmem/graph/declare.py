"""Declaring the graph: parsing an associations object, storing each
entity, alias, mention and relation, and resolving ``mem:<id>`` refs.

Declarations are asserted by an agent or an operator and stored as written, with
normalized twins for lookup; nothing is inferred or extracted and no model is called.

Invariants: each declaration stands or falls alone (its own transaction, a dropped
one reported with its reason); a declaration lives in its anchor's access class and
the declarer's scope layer, which then names every entity it declares, so what a
reader sees of an entity follows what it may read of the declarations, in whatever
order they came; no declaration outlives its endpoints (the store's triggers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from assocmem.errors import InvalidInput, UnknownMemory
from assocmem.store import EntityRow, Store, View
from assocmem.text.concepts import normalize_text
from assocmem.types import Declared, Dropped, Scope

DECLARERS = ("agent", "operator")
MAX_NAME_CHARS = 256
MAX_DECLARATIONS = 200
MEM_PREFIX = "mem:"
# An associations object may name an episode ``ep:<id>``; an episode here is an
# episodic memory, so the ref maps onto that memory (``mem:<id>``), and one naming
# any other kind is refused.
EP_PREFIX = "ep:"


class MemoryRefs(Store, Protocol):
    """What resolving a ``mem:``/``ep:`` ref reads: the memory rows (core)."""


class DeclarationStore(MemoryRefs, Protocol):
    """What declaring writes and reads: the graph part, the anchor's access class (the
    links part's feedback queries) and the memory rows."""

    def transaction(self) -> AbstractContextManager[None]: ...

    def access_of(self, seqs: Sequence[int]) -> dict[int, str]: ...

    def find_entities(self, scope: Scope, normalized: str) -> list[EntityRow]: ...

    def entity_in_layer(self, scope: Scope, normalized: str, access: str = "") -> int | None: ...

    def create_entity(
        self,
        scope: Scope,
        name: str,
        normalized: str,
        declared_by: str,
        access: str = "",
        *,
        standalone: bool = False,
    ) -> int: ...

    def add_alias(
        self,
        scope: Scope,
        entity_id: int,
        alias: str,
        normalized: str,
        access: str = "",
        *,
        standalone: bool = False,
    ) -> None: ...

    def add_mention(self, entity_id: int, seq: int, declared_by: str) -> bool: ...

    def add_relation(
        self,
        scope: Scope,
        subject: tuple[str, int],
        predicate: str,
        predicate_normalized: str,
        object_: tuple[str, int],
        anchor_seq: int,
        declared_by: str,
        access: str = "",
    ) -> int: ...

    def entities_by_id(
        self, ids: Sequence[int], scope: Scope | None = None
    ) -> dict[int, EntityRow]: ...


@dataclass(frozen=True)
class EntityDecl:
    name: str
    aliases: tuple[str, ...]
    item: str


@dataclass(frozen=True)
class RelationDecl:
    subject: str
    predicate: str
    object: str
    item: str


@dataclass
class _Outcome:
    entities: list[str] = field(default_factory=list)
    mentions: int = 0
    relations: list[int] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)

    def frozen(self) -> Declared:
        return Declared(
            entities=tuple(dict.fromkeys(self.entities)),
            mentions=self.mentions,
            relations=tuple(dict.fromkeys(self.relations)),
            dropped=tuple(self.dropped),
        )


def parse(associations: Any) -> tuple[list[EntityDecl], list[RelationDecl], list[Dropped]]:
    """Split an associations object into well-formed declarations and dropped ones."""
    if not isinstance(associations, Mapping):
        return [], [], [Dropped("associations", "must be a dict with entities and relations")]
    dropped = [
        Dropped(str(key), "unknown key (expected entities, relations)")
        for key in associations
        if key not in ("entities", "relations")
    ]
    entities, relations = [], []
    for i, raw in enumerate(_list(associations.get("entities"), "entities", dropped)):
        item = f"entities[{i}]"
        try:
            entities.append(_entity(raw, item))
        except InvalidInput as exc:
            dropped.append(Dropped(item, exc.message))
    for i, raw in enumerate(_list(associations.get("relations"), "relations", dropped)):
        item = f"relations[{i}]"
        try:
            relations.append(_relation(raw, item))
        except InvalidInput as exc:
            dropped.append(Dropped(item, exc.message))
    return entities, relations, dropped


def _list(value: Any, key: str, dropped: list[Dropped]) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        dropped.append(Dropped(key, "must be a list"))
        return []
    if len(value) > MAX_DECLARATIONS:
        dropped.append(Dropped(key, f"more than {MAX_DECLARATIONS}; the rest were dropped"))
    return list(value[:MAX_DECLARATIONS])


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not normalize_text(value) or len(value) > MAX_NAME_CHARS:
        raise InvalidInput(f"{what} must be a non-empty string of at most {MAX_NAME_CHARS} chars")
    return value.strip()


def _entity(raw: Any, item: str) -> EntityDecl:
    if isinstance(raw, str):
        return EntityDecl(_name(raw, "an entity name"), (), item)
    if not isinstance(raw, Mapping):
        raise InvalidInput("an entity must be a name or {name, aliases}")
    aliases = raw.get("aliases") or []
    if not isinstance(aliases, list | tuple):
        raise InvalidInput("aliases must be a list of names")
    return EntityDecl(
        _name(raw.get("name"), "an entity name"),
        tuple(_name(a, "an alias") for a in aliases),
        item,
    )


def _relation(raw: Any, item: str) -> RelationDecl:
    if not isinstance(raw, Mapping):
        raise InvalidInput("a relation must be {subject, predicate, object}")
    return RelationDecl(
        _name(raw.get("subject"), "a relation subject"),
        _name(raw.get("predicate"), "a predicate"),
        _name(raw.get("object"), "a relation object"),
        item,
    )


def declare(
    store: DeclarationStore,
    view: View,
    associations: Any,
    *,
    anchor: int | None,
    declared_by: str,
) -> Declared:
    """Store what ``associations`` declares; the ``anchor`` memory (a seq) mentions each
    declared entity and evidences each relation. Each declaration stands or falls alone.

    Declarations live in the access class of their anchor: what is declared about a
    restricted memory is as restricted as the memory."""
    access = store.access_of([anchor])[anchor] if anchor is not None else ""
    entities, relations, dropped = parse(associations)
    outcome = _Outcome(dropped=dropped)
    context = _Context(store, view, access, anchor, declared_by)
    for decl in entities:
        try:
            with store.transaction():
                _register(context, outcome, decl)
        except (InvalidInput, UnknownMemory) as exc:
            outcome.dropped.append(Dropped(decl.item, exc.message))
    for rel in relations:
        try:
            with store.transaction():
                _relate(context, outcome, rel)
        except (InvalidInput, UnknownMemory) as exc:
            outcome.dropped.append(Dropped(rel.item, exc.message))
    return outcome.frozen()


@dataclass(frozen=True)
class _Context:
    """Where declarations go: the store, the declarer's view, the anchor's access class."""

    store: DeclarationStore
    view: View
    access: str
    anchor: int | None
    declared_by: str


def _register(context: _Context, outcome: _Outcome, decl: EntityDecl) -> None:
    entity = _resolve_or_create(context, decl.name)
    for alias in decl.aliases:
        # An alias lives in the declarer's layer, whichever layer its entity is in.
        context.store.add_alias(
            context.view.scope, entity, alias, normalize_text(alias), context.access,
            standalone=context.anchor is None,
        )  # fmt: skip
    outcome.entities.append(context.store.entities_by_id([entity], context.view.scope)[entity].name)
    anchor = context.anchor
    if anchor is not None and context.store.add_mention(entity, anchor, context.declared_by):
        outcome.mentions += 1


def _resolve_or_create(context: _Context, name: str) -> int:
    """The entity ``name`` declares: the one the declaration's own layer names so, else
    the nearest the declarer can see, else a new one in its own layer. Either way its
    own layer now names it too, so whoever may read the declaration finds the entity
    by that name (an entity is visible through the declarations a reader may read)."""
    store, scope, normalized = context.store, context.view.scope, normalize_text(name)
    standalone = context.anchor is None
    entity = store.entity_in_layer(scope, normalized, context.access)
    if entity is None:
        found = store.find_entities(scope, normalized)
        entity = found[0].id if found else None
    if entity is None:
        return store.create_entity(
            scope, name, normalized, context.declared_by, context.access, standalone=standalone
        )
    store.add_alias(scope, entity, name, normalized, context.access, standalone=standalone)
    return entity


def _relate(context: _Context, outcome: _Outcome, decl: RelationDecl) -> None:
    relation = context.store.add_relation(
        context.view.scope,
        _endpoint(context, decl.subject),
        decl.predicate,
        normalize_text(decl.predicate),
        _endpoint(context, decl.object),
        context.anchor or 0,
        context.declared_by,
        context.access,
    )
    outcome.relations.append(relation)


def _endpoint(context: _Context, name: str) -> tuple[str, int]:
    if name.startswith((MEM_PREFIX, EP_PREFIX)):
        return ("mem", memory_seq(context.store, context.view, name))
    return ("entity", _resolve_or_create(context, name))


def memory_seq(store: MemoryRefs, view: View, ref: str, field: str = "ref") -> int:
    """The internal sequence of a readable ``mem:<id>`` ref (or bare id), or of an
    ``ep:<id>`` ref naming an episodic memory."""
    episode = ref.startswith(EP_PREFIX)
    memory_id = ref.removeprefix(EP_PREFIX if episode else MEM_PREFIX)
    found = store.visible_seqs(view.scope, [memory_id])
    if memory_id not in found:
        raise UnknownMemory(f"no memory {memory_id!r} is readable here", record_id=memory_id)
    seq = found[memory_id]
    if episode:
        kind = store.records_by_seq([seq])[seq].kind
        if kind != "episodic":
            raise InvalidInput(
                f"{ref!r} names a {kind} memory, not an episode: write mem:{memory_id}",
                field=field,
            )
    return seq


def check_declarer(declared_by: Any) -> str:
    """``agent`` or ``operator``."""
    if declared_by not in DECLARERS:
        raise InvalidInput("declared_by must be 'agent' or 'operator'", field="declared_by")
    return str(declared_by)
