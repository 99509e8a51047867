"""Seed 002 §9: the readings the implementation fixed, each a check with a named mutation
that turns it red (as `test_graph.py` does for the invariants of §5); and the fidelity
points of the seed beside them: `reconstruct(as_of=...)` answers the same call byte for
byte, and ``ep:<id>`` names an episode, which here is an episodic memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from assocmem import InvalidInput, Memory, Reconstruction
from assocmem.graph import reconstruct
from assocmem.graph.store import GraphQueries
from assocmem.store import RelationRow
from tests.conftest import Target

OLD = "2001-01-01T00:00:00Z"


def rel(i: int, subject: int, obj: int, predicate: str = "r") -> RelationRow:
    return RelationRow(i, "entity", subject, predicate, "entity", obj, 0, "agent", "t")


def serialized(result: Reconstruction) -> str:
    return json.dumps(result.to_dict(), sort_keys=True, ensure_ascii=False)


def maintained(mem: Memory) -> dict[str, str]:
    """Kirari maintains MizEye: one record about each end, one more on MizEye alone."""
    ids = {}
    for label, text, entities in (
        ("kirari", "Kirari wrote the onboarding guide.", ["Kirari"]),
        ("mizeye", "MizEye drops frames at night.", ["MizEye"]),
        ("mizeye2", "MizEye got a new lens.", ["MizEye"]),
    ):
        ids[label] = mem.write(text, observed_at=OLD, associations={"entities": entities}).id or ""
    relation = {"subject": "Kirari", "predicate": "maintains", "object": "MizEye"}
    mem.declare({"relations": [relation]})
    return ids


def evidence_of(result: Reconstruction, memory_id: str) -> dict[str, Any]:
    (item,) = [i for i in result.items if i.ref == f"mem:{memory_id}"]
    return {e.ref.removeprefix("mem:"): e for e in item.evidence}


# -- the readings ------------------------------------------------------------------


def check_direction(store_target: Target) -> None:
    """Direction: a relation is followed from either end, its predicate as declared."""
    with Memory(store_target("direction"), agent_id="lab") as mem:
        ids = maintained(mem)
        from_object = mem.reconstruct("frames at night", count=1)
        reached = evidence_of(from_object, ids["mizeye"])
        assert ids["kirari"] in reached and reached[ids["kirari"]].why == "relation:maintains"
        from_subject = mem.reconstruct("onboarding guide", count=1)
        assert ids["mizeye"] in evidence_of(from_subject, ids["kirari"])


def check_hops_start_at_one(store_target: Target) -> None:
    """Hops start at one: sharing an entity with an item is not a relation."""
    with Memory(store_target("hops"), agent_id="lab") as mem:
        ids = maintained(mem)
        reached = evidence_of(mem.reconstruct("frames at night", count=1), ids["mizeye"])
        assert ids["mizeye2"] not in reached  # mentions MizEye too, through no relation
        assert all(e.hops >= 1 for e in reached.values())


def check_one_row_one_place() -> None:
    """One row, one place: a pooled record stays where retrieval put it, and a record
    two items reach belongs to the earlier item."""
    inputs = reconstruct.WalkInputs(
        mentions={1: [10], 2: [20]},
        relations=[rel(1, 10, 30), rel(2, 20, 30)],
        mentioned_by={30: [2, 7, 8]},
    )
    walked = reconstruct.walk([1, 2], inputs, max_hops=1, max_evidence=5)
    assert [r.seq for r in walked.evidence[1]] == [7, 8]  # 2 is an item of its own
    assert 2 not in walked.evidence  # 7 and 8 went to the earlier item


def check_reading_is_bounded(store_target: Target) -> None:
    """Reading is bounded: per entity reached at most max_evidence records are read,
    lowest id first, and meeting the bound is named in ``bounds.reached``."""
    with Memory(store_target("bounded"), agent_id="lab") as mem:
        ids = maintained(mem)
        minutes = [
            mem.write(f"Kirari's notes, part {n}.", observed_at=OLD,
                      associations={"entities": ["Kirari"]}).id
            for n in range(4)
        ]  # fmt: skip
        result = mem.reconstruct("frames at night", count=1, max_evidence=2)
        assert list(evidence_of(result, ids["mizeye"])) == [ids["kirari"], minutes[0]]
        assert "max_evidence" in result.bounds["reached"]


def check_why_and_independence(store_target: Target) -> None:
    """why and independence: a bundled row says its predicate, no hops and
    ``cluster:relation``; a row the walk reached says its predicate and its hops."""
    with Memory(store_target("why"), agent_id="lab") as mem:
        ids = maintained(mem)
        fix = mem.write("Correction: MizEye drops frames only at dusk.", observed_at=OLD).id
        mem.declare({"relations": [
            {"subject": f"mem:{fix}", "predicate": "corrects", "object": f"mem:{ids['mizeye']}"}
        ]})  # fmt: skip
        result = mem.reconstruct("MizEye drops frames", count=4)
        (head,) = [i for i in result.items if i.ref in (f"mem:{fix}", f"mem:{ids['mizeye']}")]
        bundled = [e for e in head.evidence if e.independence_reason]
        walked = [e for e in head.evidence if not e.independence_reason]
        assert [(e.why, e.hops, e.independence_reason) for e in bundled] == [
            ("relation:corrects", None, "cluster:relation")
        ]
        assert walked and all(e.why == "relation:maintains" and e.hops == 1 for e in walked)


def check_stage_one_votes(store_target: Target) -> None:
    """Stage 1 adds a vote, not an admission: a record the alias alone matches is
    ranked by fusion like any lexical hit, below one the question's own words find."""
    with Memory(store_target("vote"), agent_id="lab") as mem:
        entity = {"name": "MizEye", "aliases": ["ミズアイ"]}
        mem.write("MizEye rig notes.", observed_at=OLD, associations={"entities": [entity]})
        alias_only = mem.write("MizEye was moved to the lab.", observed_at=OLD).id
        words = mem.write("The sensor reset went ok after the firmware update.", observed_at=OLD).id
        heads = [i.ref for i in mem.reconstruct("Did the sensor reset on ミズアイ go ok?").items]
        assert f"mem:{alias_only}" in heads  # the alias voted it in
        assert heads.index(f"mem:{words}") < heads.index(f"mem:{alias_only}")


READINGS: dict[str, Callable[..., None]] = {
    "direction": check_direction,
    "hops_start_at_one": check_hops_start_at_one,
    "one_row_one_place": check_one_row_one_place,
    "reading_bounded": check_reading_is_bounded,
    "why_and_independence": check_why_and_independence,
    "stage_one_votes": check_stage_one_votes,
}
NEEDS_STORE = {name for name in READINGS if name != "one_row_one_place"}


# -- their mutations ---------------------------------------------------------------


def _subject_to_object_only(mp: pytest.MonkeyPatch) -> None:
    def reach(start: Any, adjacency: Any, max_hops: int) -> Any:
        forward = {e: [r for r in rows if r.subject_id == e] for e, rows in adjacency.items()}
        return original(start, forward, max_hops)

    original = reconstruct._reach
    mp.setattr(reconstruct, "_reach", reach)


def _shared_entity_counts(mp: pytest.MonkeyPatch) -> None:
    def reach(start: Any, adjacency: Any, max_hops: int) -> Any:
        best, beyond = original(start, adjacency, max_hops)
        for entity in start:
            for row in adjacency.get(entity, ())[:1]:
                best.setdefault(entity, (1, row))
        return best, beyond

    original = reconstruct._reach
    mp.setattr(reconstruct, "_reach", reach)


def _each_item_walks_alone(mp: pytest.MonkeyPatch) -> None:
    def walk(pool: Any, inputs: Any, **bounds: Any) -> Any:
        bounds.pop("placed", None)
        parts = [original([seq], inputs, **bounds) for seq in pool]
        return replace(parts[0], evidence={k: v for p in parts for k, v in p.evidence.items()})

    original = reconstruct.walk
    mp.setattr(reconstruct, "walk", walk)


def _highest_ids_read_first(mp: pytest.MonkeyPatch) -> None:
    original = GraphQueries.mentioning

    def mentioning(self: GraphQueries, view: Any, entity_id: int, limit: int) -> list[int]:
        return list(reversed(original(self, view, entity_id, 10_000)))[:limit]

    mp.setattr(GraphQueries, "mentioning", mentioning)


def _bundles_lose_their_reason(mp: pytest.MonkeyPatch) -> None:
    original = reconstruct._bundles

    def bundles(*args: Any) -> Any:
        stage = original(*args)
        plain = {k: [replace(e, independence_reason=None, hops=0) for e in v]
                 for k, v in stage.bundles.items()}  # fmt: skip
        return replace(stage, bundles=plain)

    mp.setattr(reconstruct, "_bundles", bundles)


def _alias_matches_admitted_first(mp: pytest.MonkeyPatch) -> None:
    original = reconstruct.pipeline.read

    def read(store: Any, request: Any, space: Any) -> Any:
        result = original(store, request, space)
        if not request.extra_terms:
            return result
        alias = set(request.extra_terms)
        first = [i for i in result.items if alias & set(i.text.lower().split())]
        rest = [i for i in result.items if i not in first]
        return replace(result, items=tuple(first + rest))

    mp.setattr(reconstruct.pipeline, "read", read)


MUTANTS: dict[str, tuple[str, Callable[[pytest.MonkeyPatch], None]]] = {
    "subject_to_object_only": ("direction", _subject_to_object_only),
    "shared_entity_counts": ("hops_start_at_one", _shared_entity_counts),
    "each_item_walks_alone": ("one_row_one_place", _each_item_walks_alone),
    "highest_ids_read_first": ("reading_bounded", _highest_ids_read_first),
    "bundles_lose_their_reason": ("why_and_independence", _bundles_lose_their_reason),
    "alias_matches_admitted_first": ("stage_one_votes", _alias_matches_admitted_first),
}


def _run(name: str, store_target: Target) -> None:
    if name in NEEDS_STORE:
        READINGS[name](store_target)
    else:
        READINGS[name]()


@pytest.mark.parametrize("name", sorted(READINGS))
def test_reading_holds(name: str, store_target: Target) -> None:
    _run(name, store_target)


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutation_turns_reading_red(
    mutant: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The store mutants patch the SQLite store; the readings run on both backends.
    reading, mutate = MUTANTS[mutant]
    mutate(monkeypatch)
    with pytest.raises((AssertionError, ValueError, KeyError)):
        _run(reading, lambda name="store": str(tmp_path / f"{name}.db"))


def test_every_reading_has_a_mutation() -> None:
    assert {reading for reading, _ in MUTANTS.values()} == set(READINGS)


# -- fidelity ------------------------------------------------------------------------


def test_reconstruct_as_of_answers_fresh_memories_byte_for_byte(store_target: Target) -> None:
    with Memory(store_target("as_of"), agent_id="lab") as mem:
        ids = maintained(mem)
        for n in range(3):  # fresh: decay still moves between two calls at wall-clock time
            mem.write(f"MizEye frame log {n}.", associations={"entities": ["MizEye"]})
        moment = "2030-01-01T00:00:00Z"
        first = mem.reconstruct("MizEye frames", count=4, as_of=moment)
        again = mem.reconstruct("MizEye frames", count=4, as_of=moment)
        assert serialized(first) == serialized(again)
        assert ids["mizeye"] in {i.ref.removeprefix("mem:") for i in first.items} | {
            e.ref.removeprefix("mem:") for i in first.items for e in i.evidence
        }
        with pytest.raises(InvalidInput) as caught:
            mem.reconstruct("MizEye frames", as_of="not a time")
        assert caught.value.field == "as_of"


def test_an_episode_ref_is_its_episodic_memory(store_target: Target) -> None:
    with Memory(store_target("ep"), agent_id="lab") as mem:
        episode = mem.write("The rig fell over during the demo.").id
        fact = mem.write("The rig weighs 4 kg.", kind="semantic").id
        declared = mem.declare(
            {"entities": ["Rig"], "relations": [
                {"subject": f"ep:{episode}", "predicate": "qualifies", "object": "Rig"},
                {"subject": f"ep:{fact}", "predicate": "qualifies", "object": "Rig"},
            ]},
            anchor_ref=f"ep:{episode}",
        )  # fmt: skip
        assert len(declared.relations) == 1 and declared.mentions == 1
        (dropped,) = declared.dropped
        assert "names a semantic memory, not an episode" in dropped.reason
        (relation,) = mem.inspect(episode or "").relations
        assert relation.subject == f"mem:{episode}"  # mapped, and reported as the memory
        with pytest.raises(InvalidInput) as caught:
            mem.declare({"entities": ["Rig"]}, anchor_ref=f"ep:{fact}")
        assert caught.value.field == "anchor_ref"
