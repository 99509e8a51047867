"""Who sees a declared entity: an entity is visible to a reader iff a memory that reader
may read declares or mentions it (or a declaration with no memory put it in a layer
the reader reads), and a relation iff the memory asserting it is readable; whatever
order the declarations came in, and after the restricted declarer is forgotten or
archived. On both backends."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from assocmem import Memory, UnknownEntity, WriteResult
from assocmem.capabilities import migrations
from tests.conftest import Target

RESTRICTED = "The vault runs on the nightjar host in the basement."
PUBLIC = "The vault is backed up nightly."
SHELF = "Tapes sit on the cellar rack."
SECRET_WORDS = ("nightjar", "hostbox", "basement")


@dataclass
class World:
    plain: Memory
    ops: Memory
    restricted: WriteResult
    public: WriteResult


def _restricted(ops: Memory) -> WriteResult:
    return ops.write(RESTRICTED, access=["ops"], associations={
        "entities": [{"name": "Vault", "aliases": ["Nightjar"]}],
        "relations": [{"subject": "Vault", "predicate": "runs on", "object": "Hostbox"}],
    })  # fmt: skip


def _public(writer: Memory) -> WriteResult:
    return writer.write(PUBLIC, associations={"entities": ["vault"]})


@pytest.fixture(params=["restricted_first", "public_first"])
def order(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def world(store_target: Target, order: str) -> Iterator[World]:
    """A restricted memory and a public one declare the same entity, in either order;
    the public one is written by a writer who can read both (the one whose resolution
    reaches the restricted declaration)."""
    target = store_target("vis")
    with Memory(target, agent_id="a") as plain, Memory(target, agent_id="a", role="ops") as ops:
        if order == "restricted_first":
            restricted, public = _restricted(ops), _public(ops)
        else:
            public, restricted = _public(ops), _restricted(ops)
        assert restricted.stored and public.stored
        yield World(plain, ops, restricted, public)


def _ref(result: WriteResult) -> str:
    return f"mem:{result.id}"


def _names_and_refs(mem: Memory, name: str) -> list[tuple[str, tuple[str, ...], frozenset[str]]]:
    return [(e.name, e.aliases, frozenset(e.refs)) for e in mem.traverse(name, max_hops=2).entities]


def test_each_reader_sees_what_its_role_may_read(world: World) -> None:
    seen = world.plain.traverse("Vault", max_hops=2)
    assert [(e.name, e.aliases, e.refs) for e in seen.entities] == [
        ("vault", ("vault",), (_ref(world.public),))
    ]
    assert seen.relations == ()
    assert not any(word in json.dumps(seen.to_dict()).lower() for word in SECRET_WORDS)
    assert world.plain.resolve("Vault", "runs on") == []
    # A name only the restricted memory declares is as unknown as one never declared.
    messages = []
    for name in ("Nightjar", "Hostbox", "Never Declared"):
        with pytest.raises(UnknownEntity) as unknown:
            world.plain.traverse(name)
        messages.append(unknown.value.message.replace(repr(name), "NAME"))
    assert len(set(messages)) == 1
    # The restricted reader sees one entity with both mentions, and the relation.
    vault, hostbox = world.ops.traverse("Nightjar", max_hops=2).entities
    assert set(vault.refs) == {_ref(world.public), _ref(world.restricted)}
    assert vault.name.casefold() == "vault" and "Nightjar" in vault.aliases
    assert (hostbox.name, hostbox.refs) == ("Hostbox", ())
    assert world.ops.resolve("vault", "runs on") == ["Hostbox"]


def test_a_record_lists_its_mentions_by_the_names_its_reader_may_read(world: World) -> None:
    assert world.plain.inspect(world.public.id or "").mentions == ("vault",)
    (named,) = world.ops.inspect(world.restricted.id or "").mentions
    assert named.casefold() == "vault"


def test_forgetting_the_restricted_declarer_keeps_the_public_mention(world: World) -> None:
    assert world.ops.forget([world.restricted.id or ""]) == 1
    for reader in (world.plain, world.ops):
        (vault,) = reader.traverse("vault", max_hops=2).entities
        assert vault.refs == (_ref(world.public),)
    assert world.ops.traverse("vault").relations == ()
    with pytest.raises(UnknownEntity):
        world.plain.traverse("Hostbox")


def test_archiving_the_restricted_declarer_changes_nothing_the_public_reader_sees(
    world: World,
) -> None:
    before = _names_and_refs(world.plain, "vault")
    assert world.ops.archive([world.restricted.id or ""]).changed == (world.restricted.id,)
    assert _names_and_refs(world.plain, "vault") == before
    (vault, _) = world.ops.traverse("vault").entities
    assert vault.refs == (_ref(world.public),)  # an archived record is left out of refs


def test_forgetting_the_public_declarer_hides_the_entity_from_the_public_reader(
    world: World,
) -> None:
    assert world.ops.forget([world.public.id or ""]) == 1
    with pytest.raises(UnknownEntity):
        world.plain.traverse("vault")
    (vault, _) = world.ops.traverse("vault").entities
    assert vault.refs == (_ref(world.restricted),)


def test_reconstruct_walks_from_the_public_mention_and_never_into_restricted_records(
    world: World,
) -> None:
    shelf = world.ops.write(SHELF, associations={
        "entities": ["Cellar Shelf"],
        "relations": [{"subject": "vault", "predicate": "stored on", "object": "Cellar Shelf"}],
    })  # fmt: skip
    result = world.plain.reconstruct("vault backed up nightly", max_hops=2)
    by_ref = {item.ref: item for item in result.items}
    assert [e.ref for e in by_ref[_ref(world.public)].evidence] == [_ref(shelf)]
    said = json.dumps(result.to_dict()).lower()
    assert world.restricted.id not in json.dumps(result.to_dict())
    assert not any(word in said for word in SECRET_WORDS)


def test_an_entity_declared_with_no_memory_is_visible_to_its_layer(store_target: Target) -> None:
    # A declaration with no anchor puts the entity in the declarer's layer by itself,
    # whichever restricted memory declared it first.
    target = store_target("vis")
    with Memory(target, agent_id="a") as plain, Memory(target, agent_id="a", role="ops") as ops:
        _restricted(ops)
        with pytest.raises(UnknownEntity):
            plain.traverse("vault")
        ops.declare({"entities": ["Vault"]})
        (vault,) = plain.traverse("vault").entities
        assert (vault.name, vault.aliases, vault.refs) == ("Vault", ("Vault",), ())


# The first migration of this rule, per backend: a store built up to it is an old one.
VISIBILITY_MIGRATION = {"sqlite": "0021_entity_visibility", "postgres": "0022_entity_visibility"}
OLD_GRAPH = [
    "INSERT INTO scopes (id, agent_id, project_id, channel, access)"
    " VALUES (1, 'a', '', '', ''), (2, 'a', '', '', 'ops')",
    "INSERT INTO entities (id, scope_id, name, normalized, declared_by, created_at, public_id)"
    " VALUES (1, 1, 'Ent', 'ent', 'agent', '2026-01-01T00:00:00Z', 11),"
    " (2, 2, 'Far', 'far', 'agent', '2026-01-01T00:00:00Z', 12)",
    "INSERT INTO entity_aliases (entity_id, scope_id, alias, normalized)"
    " VALUES (1, 1, 'Ent', 'ent'), (2, 2, 'Far', 'far')",
    "INSERT INTO relations (scope_id, subject_kind, subject_id, predicate, predicate_normalized,"
    " object_kind, object_id, declared_by, declared_at, public_id)"
    " VALUES (2, 'entity', 1, 'near', 'near', 'entity', 2, 'agent', '2026-01-01T00:00:00Z', 13)",
]


def _old_store(backend: str, target: str) -> None:
    """A store as the migrations before this rule left it, with a public entity that a
    restricted relation names and a restricted entity."""
    steps = [sql for name, sql in migrations(backend) if name < VISIBILITY_MIGRATION[backend]]
    names = [name for name, _ in migrations(backend) if name < VISIBILITY_MIGRATION[backend]]
    record = "CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    if backend == "sqlite":
        conn = sqlite3.connect(target)
        for sql in [record, *steps, *OLD_GRAPH]:
            conn.executescript(sql)
        conn.executemany("INSERT INTO schema_migrations VALUES (?, 'now')", [(n,) for n in names])
        conn.commit()
        conn.close()
        return
    import psycopg

    with psycopg.connect(target, autocommit=True) as pg:
        for sql in [record, *steps, *OLD_GRAPH]:
            pg.execute(sql.encode())
        for name in names:
            pg.execute("INSERT INTO schema_migrations VALUES (%s, 'now')", [name])


def test_an_old_store_keeps_what_each_reader_saw_and_names_across_layers(
    store_target: Target, backend: str
) -> None:
    target = store_target("old")
    _old_store(backend, target)
    with Memory(target, agent_id="a") as plain, Memory(target, agent_id="a", role="ops") as ops:
        (ent,) = plain.traverse("ent").entities  # a restricted relation names it: still seen
        assert (ent.name, plain.traverse("ent").relations) == ("Ent", ())
        with pytest.raises(UnknownEntity):
            plain.traverse("far")
        assert [e.name for e in ops.traverse("ent").entities] == ["Ent", "Far"]
        # One entity may now be named in several layers: declared with no memory in the
        # public layer, the restricted entity is seen there, its relation still not.
        ops.declare({"entities": ["Far"]})
        (far,) = plain.traverse("far").entities
        assert (far.name, plain.traverse("far").relations) == ("Far", ())


def test_an_export_names_entities_as_its_reader_may_read_them(world: World) -> None:
    exported = "\n".join(json.dumps(line) for line in world.plain.export_all()).lower()
    assert '"vault"' in exported
    assert not any(word in exported for word in SECRET_WORDS)
    assert "nightjar" in "\n".join(json.dumps(line) for line in world.ops.export_all()).lower()
