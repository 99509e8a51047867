"""The declared graph: declaring, retracting, traverse, reconstruct, and seed 002's invariants.

Each invariant has a check function and a named mutation (see `MUTANTS`) that breaks
the code the invariant protects; `test_invariant_holds` runs every check on the real
code and `test_mutation_turns_invariant_red` shows each check failing under its mutation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from assocmem import AliasClash, InvalidInput, Memory, Reconstruction, UnknownEntity, UnknownMemory
from assocmem.graph import reconstruct, traverse
from assocmem.graph.store import GraphQueries
from assocmem.recall import pipeline
from assocmem.store import RelationRow, View
from assocmem.store.sqlite import SQLiteStore
from assocmem.text.concepts import tokenize
from tests.conftest import Target, raw_query

OLD = "2001-01-01T00:00:00Z"  # fully faded: decay folds are exactly stable between calls


@pytest.fixture
def mem(store_target: Target) -> Iterator[Memory]:
    with Memory(store_target("graph"), agent_id="lab") as memory:
        yield memory


def world(mem: Memory) -> dict[str, str]:
    """A small declared world; returns text label → memory id."""
    ids = {}

    def note(label: str, text: str, associations: dict[str, Any] | None = None) -> None:
        result = mem.write(text, observed_at=OLD, associations=associations)
        assert result.stored
        ids[label] = result.id or ""

    note("keeps", "Kirari keeps the camera rig running and patched its driver.", {
        "entities": [{"name": "MizEye", "aliases": ["camera rig", "ミズアイ"]}, "Kirari"],
        "relations": [{"subject": "Kirari", "predicate": "maintains", "object": "MizEye"}],
    })  # fmt: skip
    note("board", "The MizEye sensor board was replaced in May.", {"entities": ["MizEye"]})
    note("club", "Kirari joined the robotics club last spring.", {
        "entities": ["Kirari"],
        "relations": [{"subject": "Kirari", "predicate": "member of", "object": "Robotics Club"}],
    })  # fmt: skip
    note(
        "fridays", "The robotics club meets on Fridays in room 4.", {"entities": ["Robotics Club"]}
    )
    note("noise", "Unrelated: the cafeteria serves soup on Mondays.")
    note("fix", "Correction: the sensor board was replaced in June, not May.")
    mem.declare({"relations": [
        {"subject": f"mem:{ids['fix']}", "predicate": "corrects", "object": f"mem:{ids['board']}"}
    ]})  # fmt: skip
    return ids


# -- declaring ------------------------------------------------------------------


def test_write_declares_and_reports(mem: Memory) -> None:
    result = mem.write(
        "Kirari maintains MizEye.",
        associations={
            "entities": [{"name": " MizEye ", "aliases": ["MIZEYE", "ミズアイ"]}],
            "relations": [
                {"subject": "Kirari", "predicate": "Maintains", "object": "MizEye"},
                {"subject": "Kirari", "predicate": 7, "object": "MizEye"},
            ],
            "colour": "red",
        },
    )
    assert result.stored and result.associations is not None
    assert result.associations.entities == ("MizEye",)
    assert result.associations.mentions == 1
    assert len(result.associations.relations) == 1
    assert {d.item for d in result.associations.dropped} == {"colour", "relations[1]"}
    entity = mem.traverse("mizeye").entities[0]
    assert entity.name == "MizEye" and entity.aliases == ("MizEye", "ミズアイ")
    assert mem.traverse("Kirari").relations[0].predicate == "Maintains"  # kept as written


@pytest.mark.parametrize(
    "associations", ["not a dict", {"entities": "x"}, {"entities": [{"aliases": []}]}]
)
def test_a_malformed_declaration_never_costs_the_memory(mem: Memory, associations: Any) -> None:
    result = mem.write("still stored", associations=associations)
    assert result.stored and result.associations and result.associations.dropped
    assert mem.stats().memories == 1


def test_one_alias_names_one_entity_per_scope(mem: Memory) -> None:
    mem.declare({"entities": [{"name": "MizEye", "aliases": ["eye"]}]})
    outcome = mem.declare({"entities": [{"name": "Other", "aliases": ["EYE "]}]})
    (dropped,) = outcome.dropped
    assert "'MizEye'" in dropped.reason and "eye" in dropped.reason.lower()
    with pytest.raises(UnknownEntity):
        mem.traverse("Other")  # the clashing declaration was dropped whole
    with pytest.raises(AliasClash):
        mem._store.add_alias(mem.scope, 999, "eye", "eye")


def test_declare_standalone_with_anchor_and_operator(mem: Memory) -> None:
    note = mem.write("A note about the rig.")
    outcome = mem.declare(
        {
            "entities": ["MizEye"],
            "relations": [{"subject": "MizEye", "predicate": "part of", "object": "Lab"}],
        },
        anchor_ref=f"mem:{note.id}",
        declared_by="operator",
    )
    assert outcome.mentions == 1
    relation = mem.traverse("MizEye").relations[0]
    assert relation.declared_by == "operator" and relation.anchor == f"mem:{note.id}"
    with pytest.raises(InvalidInput):
        mem.declare({"entities": ["x"]}, declared_by="robot")
    with pytest.raises(UnknownMemory):
        mem.declare({"entities": ["x"]}, anchor_ref="mem:nope")
    dropped = mem.declare({"relations": [{"subject": "mem:nope", "predicate": "p", "object": "x"}]})
    assert "nope" in dropped.dropped[0].reason


def test_retract_is_the_only_way_out(mem: Memory) -> None:
    ids = world(mem)
    relation = mem.traverse("Kirari").relations[0]
    assert mem.retract(relation_ids=[relation.id]) == {"relations": 1, "mentions": 0}
    assert mem.retract(mentions=[("MizEye", f"mem:{ids['board']}")]) == {
        "relations": 0,
        "mentions": 1,
    }
    mizeye = mem.traverse("MizEye").entities[0]
    assert f"mem:{ids['board']}" not in mizeye.refs
    assert mem.retract(relation_ids=[relation.id]) == {"relations": 0, "mentions": 0}


# -- traverse -------------------------------------------------------------------


def test_traverse_walks_either_direction_in_order(mem: Memory) -> None:
    world(mem)
    result = mem.traverse("camera rig", max_hops=2)
    assert [(e.name, e.hops) for e in result.entities] == [
        ("MizEye", 0), ("Kirari", 1), ("Robotics Club", 2),
    ]  # fmt: skip
    assert [r.predicate for r in result.relations] == ["maintains", "member of"]
    assert result.cut == {"entities": 0, "refs": 0}
    assert mem.traverse("camera rig", max_hops=1).entities[-1].name == "Kirari"


def test_traverse_bounds_are_counted(mem: Memory) -> None:
    for i in range(5):
        mem.write(f"hub note {i}", associations={"entities": ["Hub"], "relations": [
            {"subject": "Hub", "predicate": "links", "object": f"Spoke {i}"}]})  # fmt: skip
    result = mem.traverse("hub", limit=3)
    assert len(result.entities) == 3 and result.cut["entities"] == 3
    assert len(result.entities[0].refs) == 3 and result.entities[0].refs_cut == 2
    # the most recently declared relation first among equal hops
    assert [e.name for e in result.entities] == ["Hub", "Spoke 4", "Spoke 3"]
    assert result.relations and all(r.subject == "Hub" for r in result.relations)
    for bad in ({"max_hops": 6}, {"limit": 101}, {"max_hops": 0}):
        with pytest.raises(InvalidInput):
            mem.traverse("hub", **bad)
    with pytest.raises(UnknownEntity):
        mem.traverse("nobody")


def test_traverse_starts_from_every_readable_entity_with_the_name(store_target: Target) -> None:
    path = store_target("g")
    with Memory(path, agent_id="a") as pool, Memory(path, agent_id="a", project_id="p") as proj:
        pool.declare({"entities": ["Rig"], "relations": [
            {"subject": "Rig", "predicate": "in", "object": "Lab"}]})  # fmt: skip
        proj.declare({"relations": [{"subject": "Rig", "predicate": "owned by", "object": "Team"}]})
        names = {e.name for e in proj.traverse("rig").entities}
        assert names == {"Rig", "Lab", "Team"}  # the project reuses the pool's Rig
        assert {e.name for e in pool.traverse("rig").entities} == {"Rig", "Lab"}


# -- reconstruct ----------------------------------------------------------------


def test_reconstruct_adds_evidence_bundles_and_roles(mem: Memory) -> None:
    ids = world(mem)
    result = mem.reconstruct("Who keeps the camera rig running?", count=4, max_hops=2)
    heads = [item.ref for item in result.items]
    keeps = result.items[heads.index(f"mem:{ids['keeps']}")]
    walked = {e.ref: e for e in keeps.evidence}
    assert walked[f"mem:{ids['fridays']}"].why == "relation:member of"
    assert walked[f"mem:{ids['fridays']}"].hops == 1
    plain = [i.id for i in mem.read("Who keeps the camera rig running?", k=4).items]
    assert all(e.ref[4:] not in plain for e in keeps.evidence)
    fix = mem.reconstruct("sensor board replaced", count=5)
    plain = [i.id for i in mem.read("sensor board replaced", k=5).items]
    assert {ids["fix"], ids["board"]} <= set(plain)
    # The two records a declared relation joins are one item, the earlier of the two.
    first, second = sorted((ids["fix"], ids["board"]), key=plain.index)
    heads = [i.ref for i in fix.items]
    assert f"mem:{first}" in heads and f"mem:{second}" not in heads
    assert heads == [f"mem:{i}" for i in plain if i != second]
    item = fix.items[heads.index(f"mem:{first}")]
    role = item.roles[0]
    assert (role.role, role.subject, role.object) == (
        "corrects", f"mem:{ids['fix']}", f"mem:{ids['board']}",
    )  # fmt: skip
    (member,) = [e for e in item.evidence if e.independence_reason]
    assert member.ref == f"mem:{second}" and member.independence_reason == "cluster:relation"
    assert member.why == "relation:corrects" and member.hops is None


def test_stage_one_votes_aliases_to_the_lexical_arm_only(mem: Memory) -> None:
    ids = world(mem)
    view = View(mem.scope)
    assert traverse.alias_terms(mem._store, view, "is ミズアイ ok?") == (
        "mizeye", "camera", "rig",
    )  # fmt: skip
    top = mem.reconstruct("Is ミズアイ ok?", count=3).items
    assert top and top[0].ref in {f"mem:{ids['keeps']}", f"mem:{ids['board']}"}
    assert mem.read("Is ミズアイ ok?", k=3).items == () or all(
        i.id not in {ids["keeps"], ids["board"]} for i in mem.read("Is ミズアイ ok?", k=3).items
    )


def test_walk_is_a_pure_bounded_function() -> None:
    rel = lambda i, s, o, p="r": RelationRow(i, "entity", s, p, "entity", o, 0, "agent", "t")  # noqa: E731
    inputs = reconstruct.WalkInputs(
        mentions={1: [10], 2: [20]},
        relations=[rel(1, 10, 11), rel(2, 11, 12), rel(3, 20, 11, "newer")],
        mentioned_by={10: [1, 5], 11: [6, 7, 8], 12: [9], 20: [2]},
    )
    walked = reconstruct.walk([1, 2], inputs, max_hops=2, max_evidence=2)
    assert [(r.seq, r.hops, r.relation.id) for r in walked.evidence[1]] == [(6, 1, 1), (7, 1, 1)]
    # item 1 left 9 (its third); item 2 reaches 11 too, whose 6 and 7 belong to the
    # earlier item, then 12 (newer relation first) and 10 at two hops; 8 was past the bound
    assert [(r.seq, r.hops) for r in walked.evidence[2]] == [(9, 2), (5, 2)]
    assert walked.omitted == 1 and walked.reached == ("max_evidence",)
    assert reconstruct.walk([1, 2], inputs, max_hops=2, max_evidence=2) == walked
    assert reconstruct.walk([1], inputs, max_hops=1, max_evidence=5).reached == ("max_hops",)


def test_reconstruct_bounds_are_validated(mem: Memory) -> None:
    for bad in ({"max_hops": 6}, {"max_evidence": 0}, {"count": 0}):
        with pytest.raises(InvalidInput):
            mem.reconstruct("x", **bad)


# -- invariants and their mutations ----------------------------------------------

QUERY = "Who keeps the camera rig running?"


def serialized(result: Reconstruction) -> str:
    return json.dumps(result.to_dict(), sort_keys=True, ensure_ascii=False)


def read_snapshot(mem: Memory, query: str) -> list[tuple[str, float, str]]:
    return [(i.id, i.score, i.source) for i in mem.read(query, k=6).items]


def check_read_unchanged(store_target: Target) -> None:
    """1. `read` gives the same items with the graph populated as without it."""
    with (
        Memory(store_target("bare"), agent_id="lab") as bare,
        Memory(store_target("full"), agent_id="lab") as full,
    ):
        for text in ("Kirari keeps MizEye running.", "The MizEye board was replaced.",
                     "Cameras need calibration weekly.", "The rig room is cold."):  # fmt: skip
            bare.write(text, observed_at=OLD)
            full.write(text, observed_at=OLD, associations={
                "entities": [{"name": "MizEye", "aliases": ["camera rig"]}]})  # fmt: skip
        strip = lambda snap: [(score, source) for _, score, source in snap]  # noqa: E731
        assert strip(read_snapshot(bare, QUERY)) == strip(read_snapshot(full, QUERY))


def check_empty_graph_is_a_no_op(store_target: Target) -> None:
    """2. With nothing declared, reconstruct's output is byte-identical before any
    declaration and after every declaration is deleted again."""
    with Memory(store_target("empty"), agent_id="lab") as mem:
        for text in ("Kirari keeps the camera rig running.", "The rig board was replaced.",
                     "Who keeps the logs?", "Running the rig costs power."):  # fmt: skip
            mem.write(text, observed_at=OLD)
        before = serialized(mem.reconstruct(QUERY, count=4))
        as_read = [
            {"ref": f"mem:{i.id}", "text": i.text, "score": i.score, "source": i.source,
             "evidence": [], "roles": []}
            for i in mem.read(QUERY, k=4).items
        ]  # fmt: skip
        assert json.loads(before)["items"] == as_read
        mem.declare({"entities": ["Kirari"], "relations": [
            {"subject": "Kirari", "predicate": "keeps", "object": "Rig"}]})  # fmt: skip
        mem.delete_entity("Kirari")
        mem.delete_entity("Rig")
        assert serialized(mem.reconstruct(QUERY, count=4)) == before


def check_items_never_created_or_reordered(store_target: Target) -> None:
    """3. Heads and their order equal the plain read's, less the records a declared
    record relation bundled into an earlier item (for a question naming no alias, so
    stage 1 adds no vote and only the walk and bundling could change anything)."""
    with Memory(store_target("heads"), agent_id="lab") as mem:
        world(mem)
        question = "Who patched the driver of the sensor board?"
        result = mem.reconstruct(question, count=4, max_hops=2)
        assert any(item.evidence for item in result.items)
        bundled = {e.ref for i in result.items for e in i.evidence if e.hops is None}
        read = [f"mem:{i.id}" for i in mem.read(question, k=4).items]
        assert [i.ref for i in result.items] == [ref for ref in read if ref not in bundled]
        assert bundled <= set(read)


def check_bounded_and_deterministic(store_target: Target) -> None:
    """4. Nothing past max_hops or max_evidence; the same call gives the same output."""
    with Memory(store_target("bounds"), agent_id="lab") as mem:
        world(mem)
        for i in range(6):
            mem.write(f"robotics club minutes {i}", observed_at=OLD,
                      associations={"entities": ["Robotics Club"]})  # fmt: skip
        result = mem.reconstruct(QUERY, count=2, max_hops=1, max_evidence=2)
        for item in result.items:
            walked = [e for e in item.evidence if e.hops is not None]
            assert len(walked) <= 2 and all(e.hops <= 1 for e in walked)
        assert "max_evidence" in result.bounds["reached"]
        assert serialized(result) == serialized(
            mem.reconstruct(QUERY, count=2, max_hops=1, max_evidence=2)
        )


def check_provenance_everywhere(store_target: Target) -> None:
    """5. Every relation names its declarer (and anchor); every evidence says why."""
    with Memory(store_target("prov"), agent_id="lab") as mem:
        world(mem)
        for relation in mem.traverse("Kirari", max_hops=2).relations:
            assert relation.declared_by in ("agent", "operator") and relation.anchor
        result = mem.reconstruct(QUERY, count=4, max_hops=2)
        evidence = [e for item in result.items for e in item.evidence]
        assert evidence
        for e in evidence:
            assert e.why.startswith("relation:") and len(e.why) > len("relation:")
            assert (e.hops is None) == (e.independence_reason == "cluster:relation")
            assert e.hops is None or e.hops >= 1


def check_isolation(store_target: Target) -> None:
    """6. Never across agents; projects follow the read's rules."""
    path = store_target("iso")
    with (
        Memory(path, agent_id="lab") as a,
        Memory(path, agent_id="intruder") as b,
        Memory(path, agent_id="lab", project_id="other") as other_project,
        Memory(path, agent_id="lab", project_id="secret") as secret,
    ):
        world(a)
        secret.write("Secret: Kirari maintains the vault.", associations={
            "entities": ["Kirari"], "relations": [
                {"subject": "Kirari", "predicate": "maintains", "object": "Vault"}]})  # fmt: skip
        try:
            intruding = b.traverse("Kirari").entities
        except UnknownEntity:
            intruding = ()
        assert intruding == ()
        assert b.reconstruct(QUERY, count=4).items == ()
        seen = {e.name for e in other_project.traverse("Kirari", max_hops=3).entities}
        assert "Vault" not in seen and "MizEye" in seen
        texts = [e.text for i in other_project.reconstruct(QUERY, count=4, max_hops=3).items
                 for e in i.evidence]  # fmt: skip
        assert not any("Secret" in t for t in texts)


def check_no_declaration_outlives_its_endpoints(store_target: Target) -> None:
    """7. Deleting an entity or forgetting a memory removes what names it."""
    path = store_target("cascade")
    with Memory(path, agent_id="lab") as mem:
        ids = world(mem)
        mem.delete_entity("Robotics Club")
        mem.forget([ids["fix"]])
    [(dangling,)] = raw_query(
        path,
        "SELECT COUNT(*) FROM relations r WHERE"
        " (r.subject_kind = 'entity' AND r.subject_id NOT IN (SELECT id FROM entities))"
        " OR (r.object_kind = 'entity' AND r.object_id NOT IN (SELECT id FROM entities))"
        " OR (r.subject_kind = 'mem' AND r.subject_id NOT IN (SELECT seq FROM memories))"
        " OR (r.object_kind = 'mem' AND r.object_id NOT IN (SELECT seq FROM memories))"
        " OR (r.anchor_seq != 0 AND r.anchor_seq NOT IN (SELECT seq FROM memories))",
    )
    [(orphans,)] = raw_query(
        path,
        "SELECT (SELECT COUNT(*) FROM entity_aliases"
        "        WHERE entity_id NOT IN (SELECT id FROM entities))"
        " + (SELECT COUNT(*) FROM entity_mentions WHERE entity_id NOT IN (SELECT id FROM entities)"
        "    OR memory_seq NOT IN (SELECT seq FROM memories))",
    )
    assert dangling == 0 and orphans == 0


def check_no_model_is_called(store_target: Target) -> None:
    """4 (of §5). No model is called: declaring stores what was written and traverse is
    SQL and pure functions, so neither reaches the embedder an attached store has."""
    from assocmem.testing import ToyEmbedder

    model = ToyEmbedder()
    with Memory(store_target("model"), agent_id="lab", embedder=model) as mem:
        ids = world(mem)
        called = len(model.calls)
        mem.declare({"entities": [{"name": "Lab", "aliases": ["the lab"]}], "relations": [
            {"subject": "Kirari", "predicate": "works in", "object": "Lab"}]},
            anchor_ref=f"mem:{ids['club']}")  # fmt: skip
        assert mem.traverse("the lab", max_hops=3).entities
        assert len(model.calls) == called


INVARIANTS: dict[str, Callable[[Path], None]] = {
    "read_unchanged": check_read_unchanged,
    "empty_graph_no_op": check_empty_graph_is_a_no_op,
    "no_new_or_reordered_items": check_items_never_created_or_reordered,
    "bounded_deterministic": check_bounded_and_deterministic,
    "provenance": check_provenance_everywhere,
    "isolation": check_isolation,
    "no_orphan_declarations": check_no_declaration_outlives_its_endpoints,
    "no_model_called": check_no_model_is_called,
}


def _read_consults_graph(mp: pytest.MonkeyPatch) -> None:
    original = pipeline.read

    def mutated(store: Any, request: Any, space: Any) -> Any:
        terms = traverse.alias_terms(store, request.view, request.query or "")
        return original(store, replace(request, extra_terms=terms), space)

    mp.setattr(pipeline, "read", mutated)


def _stage_one_votes_unconditionally(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(traverse, "alias_terms", lambda store, view, query: tuple(tokenize(query)))


def _walk_creates_items(mp: pytest.MonkeyPatch) -> None:
    original = reconstruct._assemble

    def mutated(items: Any, seqs: Any, stage2: Any, walked: Any, reached: Any) -> Any:
        assembled = original(items, seqs, stage2, walked, reached)
        promoted = [
            replace(item, ref=e.ref, evidence=()) for item in assembled for e in item.evidence
        ]
        return assembled + promoted

    mp.setattr(reconstruct, "_assemble", mutated)


def _walk_unbounded(mp: pytest.MonkeyPatch) -> None:
    original = reconstruct.walk
    mp.setattr(reconstruct, "walk", lambda pool, inputs, max_hops, max_evidence, **kw:
               original(pool, inputs, max_hops=traverse.MAX_HOPS, max_evidence=1000,
                        **kw))  # fmt: skip
    load = reconstruct.load_walk
    mp.setattr(reconstruct, "load_walk", lambda store, view, pool, hops, cap: load(
        store, view, pool, traverse.MAX_HOPS, 1000))  # fmt: skip


def _evidence_without_why(mp: pytest.MonkeyPatch) -> None:
    original = reconstruct._assemble

    def mutated(*args: Any) -> Any:
        return [replace(item, evidence=tuple(replace(e, why="") for e in item.evidence))
                for item in original(*args)]  # fmt: skip

    mp.setattr(reconstruct, "_assemble", mutated)


def _graph_ignores_scope(mp: pytest.MonkeyPatch) -> None:
    original = SQLiteStore._layers

    def every_layer(self: SQLiteStore, scope: Any) -> list[int]:
        own = original(self, scope)
        return own + [r[0] for r in self._query("SELECT id FROM scopes") if r[0] not in own]

    for method in ("find_entities", "entity_relations", "mentions_of", "mentioning"):
        real = getattr(GraphQueries, method)

        def scoped(self: SQLiteStore, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            mp.setattr(self, "_layers", lambda scope: every_layer(self, scope))
            try:
                return _real(self, *args, **kwargs)
            finally:
                mp.delattr(self, "_layers")

        mp.setattr(GraphQueries, method, scoped)


def _no_cascade(mp: pytest.MonkeyPatch) -> None:
    original = SQLiteStore._migrate

    def mutated(self: SQLiteStore) -> None:
        original(self)
        self._conn.execute("DROP TRIGGER IF EXISTS entities_cascade")
        self._conn.execute("DROP TRIGGER IF EXISTS memories_graph_cascade")

    mp.setattr(SQLiteStore, "_migrate", mutated)


def _traverse_embeds_the_entity(mp: pytest.MonkeyPatch) -> None:
    original = Memory.traverse

    def traverse(self: Memory, entity: str, *args: Any, **kwargs: Any) -> Any:
        if self._space is not None:
            self._space.embed_query(entity)  # "resolve the name by meaning"
        return original(self, entity, *args, **kwargs)

    mp.setattr(Memory, "traverse", traverse)


MUTANTS: dict[str, tuple[str, Callable[[pytest.MonkeyPatch], None]]] = {
    "read_consults_graph": ("read_unchanged", _read_consults_graph),
    "stage_one_votes_unconditionally": ("empty_graph_no_op", _stage_one_votes_unconditionally),
    "walk_creates_items": ("no_new_or_reordered_items", _walk_creates_items),
    "walk_unbounded": ("bounded_deterministic", _walk_unbounded),
    "evidence_without_why": ("provenance", _evidence_without_why),
    "graph_ignores_scope": ("isolation", _graph_ignores_scope),
    "no_cascade": ("no_orphan_declarations", _no_cascade),
    "traverse_embeds_the_entity": ("no_model_called", _traverse_embeds_the_entity),
}


@pytest.mark.parametrize("name", sorted(INVARIANTS))
def test_invariant_holds(name: str, store_target: Target) -> None:
    INVARIANTS[name](store_target)


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutation_turns_invariant_red(
    mutant: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The mutants patch the SQLite store; the invariants themselves run on both backends.
    invariant, mutate = MUTANTS[mutant]
    mutate(monkeypatch)
    with pytest.raises((AssertionError, UnknownEntity)):
        INVARIANTS[invariant](lambda name="store": str(tmp_path / f"{name}.db"))


def test_every_invariant_has_a_mutation() -> None:
    assert {invariant for invariant, _ in MUTANTS.values()} == set(INVARIANTS)
