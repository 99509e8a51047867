"""Tenancy: access classes keep their own supersession, and no id a caller sees
counts another tenant's activity (SPEC C12). On both backends."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from assocmem import Memory
from assocmem.capabilities import migrations
from tests.conftest import Target, raw_query

KEY = ("db", "host")
EARLY, LATE = "2024-05-01T12:00:00Z", "2024-06-01T12:00:00Z"


def _ids(value: Any) -> set[str]:
    """Every record id a result names, wherever it names it."""
    if isinstance(value, dict):
        return {i for v in value.values() for i in _ids(v)}
    if isinstance(value, (list, tuple)):
        return {i for v in value for i in _ids(v)}
    return {value} if isinstance(value, str) else set()


def test_a_restricted_value_leaves_the_plain_current_value_alone(store_target: Target) -> None:
    target = store_target()
    with Memory(target, agent_id="a") as plain, Memory(target, agent_id="a", role="ops") as ops:
        mine = plain.write("The db host is alpha.", key=KEY, observed_at=EARLY)
        secret = ops.write("The db host is vault.", key=KEY, access=["ops"], observed_at=LATE)
        assert secret.stored and secret.superseded == ()
        assert [r.id for r in plain.get([mine.id or ""])] == [mine.id]
        assert [(r.id, r.status) for r in plain.history(KEY)] == [(mine.id, "active")]
        # The ops role reads both classes, each with its own current value.
        assert {(r.id, r.status) for r in ops.history(KEY)} == {
            (mine.id, "active"), (secret.id, "active"),
        }  # fmt: skip


def test_a_plain_value_never_names_the_restricted_record(store_target: Target) -> None:
    target = store_target()
    with Memory(target, agent_id="a") as plain, Memory(target, agent_id="a", role="ops") as ops:
        secret = ops.write("The db host is vault.", key=KEY, access=["ops"], observed_at=EARLY)
        first = plain.write("The db host is alpha.", key=KEY, observed_at=LATE)
        assert first.superseded == ()
        second = plain.write("The db host is beta.", key=KEY, observed_at="2024-07-01T00:00:00Z")
        assert second.superseded == (first.id,)
        seen = (
            _ids(second.to_dict()) | _ids([r.to_dict() for r in plain.history(KEY)])
            | _ids([c.to_dict() for c in plain.contradictions()])
        )  # fmt: skip
        assert secret.id not in seen
        assert [r.status for r in ops.history(KEY) if r.id == secret.id] == ["active"]
        # An older observation in its own class is history of that class only.
        old = ops.write("The db host was gamma.", key=KEY, access=["ops"],
                        observed_at="2024-01-01T00:00:00Z")  # fmt: skip
        assert old.reason and old.reason.startswith("history")
        assert [r.id for r in plain.history(KEY)] == [first.id, second.id]


def test_a_writer_outside_the_class_is_not_told_what_it_retired(store_target: Target) -> None:
    target = store_target()
    with Memory(target, agent_id="a") as plain, Memory(target, agent_id="a", role="ops") as ops:
        held = ops.write("The db host is vault.", key=KEY, access=["ops"], observed_at=EARLY)
        blind = plain.write("The db host is crypt.", key=KEY, access=["ops"], observed_at=LATE)
        assert blind.stored and blind.superseded == ()
        assert {r.id: r.status for r in ops.history(KEY)} == {
            held.id: "superseded", blind.id: "active",
        }  # fmt: skip


def test_forgetting_a_value_brings_back_its_own_class_only(store_target: Target) -> None:
    target = store_target()
    with Memory(target, agent_id="a") as plain, Memory(target, agent_id="a", role="ops") as ops:
        old = plain.write("The db host is alpha.", key=KEY, observed_at=EARLY)
        ops.write("The db host is vault.", key=KEY, access=["ops"], observed_at="2024-05-15T00:00Z")
        new = plain.write("The db host is beta.", key=KEY, observed_at=LATE)
        assert plain.forget([new.id or ""]) == 1
        assert [(r.id, r.status) for r in plain.history(KEY)] == [(old.id, "active")]


def _activity(other: Memory) -> None:
    """Another tenant's calls: entities, relations and feedback of its own."""
    for i in range(5):
        note = other.write(f"Node {i} talks to node {i + 1}.", associations={
            "entities": [f"node{i}", f"node{i + 1}"],
            "relations": [{"subject": f"node{i}", "predicate": "talks to",
                           "object": f"node{i + 1}"}],
        })  # fmt: skip
        other.feedback([note.id or ""], 1.0, query_concepts=[])


def _ids_seen(mem: Memory, round_: int) -> list[int]:
    note = mem.write(f"Alice {round_} manages Bob {round_}.", associations={
        "entities": [f"alice{round_}", f"bob{round_}"],
        "relations": [{"subject": f"alice{round_}", "predicate": "manages",
                       "object": f"bob{round_}"}],
    })  # fmt: skip
    declared = mem.declare({"relations": [
        {"subject": f"bob{round_}", "predicate": "reports to", "object": f"alice{round_}"}
    ]})  # fmt: skip
    traversal = mem.traverse(f"alice{round_}")
    feedback = mem.feedback([note.id or ""], 0.5, query_concepts=[])
    return [
        *declared.relations, feedback.id,
        *(e.id for e in traversal.entities), *(r.id for r in traversal.relations),
        *(e.via for e in traversal.entities if e.via is not None),
    ]  # fmt: skip


def test_ids_a_caller_sees_count_nothing_of_other_tenants(store_target: Target) -> None:
    """A's ids are random: another agent's calls in between leave no gap to count, and
    a retraction by a seen id still works."""
    with Memory(store_target(), agent_id="a") as a, Memory(store_target(), agent_id="b") as b:
        first = _ids_seen(a, 1)
        _activity(b)
        second = _ids_seen(a, 2)
    ids = first + second
    assert all(0 < i < 2**53 for i in ids)
    # Sequential ids would sit within a few of each other (plus B's calls between).
    assert min(abs(x - y) for x in first for y in second if x != y) > 1_000
    assert len(set(ids)) == len(set(first)) + len(set(second))
    with Memory(store_target(), agent_id="a") as a:
        relation = a.traverse("alice2").relations[0]
        assert a.retract(relation_ids=[relation.id]) == {"relations": 1, "mentions": 0}
        assert a.retract(relation_ids=[relation.id]) == {"relations": 0, "mentions": 0}


def _edges(mem: Memory) -> list[tuple[str, str, float]]:
    mem.write("Zebra and apple and mango.", concepts=["zebra", "apple", "mango"])
    return [(e.source, e.target, e.weight) for e in mem.graph(["zebra", "apple"]).edges]


def test_graph_orientation_does_not_depend_on_who_used_a_word_first(
    store_target: Target,
) -> None:
    with Memory(store_target("alone"), agent_id="a") as alone:
        expected = _edges(alone)
    shared = store_target("shared")
    with Memory(shared, agent_id="b") as b:
        b.write("Mango, apple, zebra.", concepts=["mango", "apple", "zebra"])
    with Memory(shared, agent_id="a") as a:
        assert _edges(a) == expected
    assert ("apple", "zebra", 1.0) in expected  # two starts linked: by name, not by id


def test_the_link_cut_breaks_ties_by_name_not_by_who_used_a_word_first(
    store_target: Target,
) -> None:
    # Twelve links of one weight around "hub"; the store's cut keeps five. Which five
    # must not depend on the creation order of the concept ids another agent caused.
    spokes = [f"spoke{i:02d}" for i in range(12)]

    def kept(mem: Memory) -> list[tuple[str, ...]]:
        store: Any = mem._store
        hub = store.concept_ids(["hub"])["hub"]
        rows = store.links_around(mem.scope, [hub], 5)
        names = store.concept_names(sorted({c for r in rows for c in (r.a, r.b)}))
        return [tuple(sorted((names[r.a], names[r.b]))) for r in rows]

    def fill(mem: Memory) -> None:
        mem.write_many([{"text": f"hub and {s}", "concepts": ["hub", s]} for s in spokes])

    with Memory(store_target("alone"), agent_id="a") as alone:
        fill(alone)
        expected = kept(alone)
    shared = store_target("shared")
    with Memory(shared, agent_id="b") as b:  # creates the spokes' ids in reverse order
        b.write_many([{"text": s, "concepts": [s]} for s in reversed(spokes)])
    with Memory(shared, agent_id="a") as a:
        fill(a)
        assert kept(a) == expected
    assert expected == [("hub", s) for s in spokes[:5]]


def test_the_migration_gives_a_class_its_retired_value_back_and_ids_a_public_face(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "old.db")
    conn = sqlite3.connect(path)  # a store as 0008 left it: ops's value retired the plain one
    conn.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    for name, sql in migrations("sqlite"):
        if name >= "0009":
            break
        conn.executescript(sql)
        conn.execute("INSERT INTO schema_migrations VALUES (?, '2026-01-01')", (name,))
    conn.executemany(
        "INSERT INTO scopes (id, agent_id, project_id, channel, access) VALUES (?, 'a', '', '', ?)",
        [(1, ""), (2, "ops")],
    )
    rows = [("P1", 1, "superseded", EARLY), ("R1", 2, "active", LATE)]
    conn.executemany(
        "INSERT INTO memories (id, scope_id, agent_id, text, kind, observed_at, fingerprint,"
        " dedupe_key, created_at, key_subject, key_relation, status)"
        " VALUES (?, ?, 'a', ?, 'semantic', ?, ?, ?, ?, 'db', 'host', ?)",
        [(i, layer, f"text {i}", at, i, i, at, status) for i, layer, status, at in rows],
    )
    conn.execute(
        "INSERT INTO feedback (scope_id, query_concepts, outcome, created_at)"
        " VALUES (1, '[]', 1.0, 'now')"
    )
    conn.commit()
    conn.close()
    with Memory(path, agent_id="a") as plain:
        assert [(r.id, r.status) for r in plain.history(KEY)] == [("P1", "active")]
    public = raw_query(path, "SELECT public_id FROM feedback")
    assert public[0][0] is not None and public[0][0] > 1
