"""Procedures on both backends: seed 001's scenario (the broad rule fails the gate on
the denied-access episode, the scoped one is promoted), the gate's refusals,
revision, retirement and `retain`'s proposals."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assocmem import InvalidInput, Memory, UnknownMemory
from assocmem.lifecycle.retention import EXAMPLE_POLICY
from tests.conftest import Target, raw_query

REPAIR = ["wrap the scalar id argument in an object", "retry the call"]
DENIED = "stop and report denied access"
# Seed 001's two fixed development cases.
CHECKS = [
    {"case": {"library": "store-v2", "error": "argument-type", "input": "scalar-id"},
     "expect": "apply"},
    {"case": {"library": "store-v2", "error": "argument-type", "access": "denied"},
     "expect": DENIED},
]  # fmt: skip
SCOPED = {"library": "store-v2", "error": "argument-type", "access": {"$ne": "denied"}}


def _episodes(mem: Memory) -> list[str]:
    """Seed 001: two successful repairs by wrapping the argument, one denied access."""
    facts = {"library": "store-v2", "error": "argument-type", "input": "scalar-id"}
    ids = [
        mem.write("remove_item(7) failed: expected object, got int; wrapped the id, it worked",
                  meta={**facts, "outcome": "success"}).id,
        mem.write("get_item(12) failed: argument type; wrapped as {'id': 12}, it worked",
                  meta={**facts, "outcome": "success"}).id,
        mem.write("remove_item({'id': 9}) failed: access denied for role student",
                  meta={**facts, "access": "denied", "outcome": "failure"}).id,
    ]  # fmt: skip
    assert all(ids)
    return [i for i in ids if i]


def _status(target: str, record_id: str | None) -> str:
    assert record_id is not None and record_id.isalnum()
    ((status,),) = raw_query(target, f"SELECT status FROM memories WHERE id = '{record_id}'")
    return str(status)


def test_the_seed_scenario(store_target: Target) -> None:
    with Memory(store_target(), agent_id="a") as mem:
        wins = _episodes(mem)[:2]
        broad = mem.propose_procedure(wins, ["wrap the argument in an object", "retry the call"],
                                      checks=CHECKS, name="store-v2 argument repair")  # fmt: skip
        assert broad.status == "candidate"
        assert not mem.read("wrap the argument", kinds=["procedural"]).items
        refused = mem.promote_procedure(broad.id)
        assert refused.status == "rejected" and refused.record_id is None
        assert refused.reason is not None and "counterexample episode" in refused.reason
        assert "access=denied" in refused.reason
        # The reason names the precondition that would exclude the counterexample.
        assert "scope it with preconditions {'access': {'$ne': 'denied'}}" in refused.reason
        assert len(refused.counterexamples) == 1

        steps = [*REPAIR, {"when": {"access": "denied"}, "do": DENIED}]
        scoped = mem.propose_procedure(wins, steps, SCOPED, CHECKS, name="store-v2 argument repair")
        promoted = mem.promote_procedure(scoped.id)
        assert promoted.status == "promoted", promoted.reason
        assert promoted.supporting == tuple(wins) and promoted.counterexamples == ()
        assert [c["passed"] for c in promoted.check_results] == [True, True]
        (record,) = mem.get([promoted.record_id or ""])
        assert record.kind == "procedural"
        assert record.meta["episodes"] == wins
        assert record.meta["preconditions"] == SCOPED
        assert record.meta["checks"] == CHECKS
        assert record.derived_from == tuple(wins)
        found = mem.read("wrap the scalar id argument", kinds=["procedural"]).items
        assert [i.id for i in found] == [promoted.record_id]


def test_the_gate_needs_two_successes_and_passing_checks(store_target: Target) -> None:
    with Memory(store_target(), agent_id="a") as mem:
        wins = _episodes(mem)[:2]
        one = mem.propose_procedure(wins[:1], REPAIR, SCOPED, CHECKS[:1])
        assert "needs 2 supporting" in (mem.promote_procedure(one.id).reason or "")
        unchecked = mem.propose_procedure(wins, REPAIR, SCOPED)
        assert "check case" in (mem.promote_procedure(unchecked.id).reason or "")
        # No guard: the denied-access check gets "decline", not the report it expects.
        wrong = mem.propose_procedure(wins, REPAIR, SCOPED, CHECKS)
        reason = mem.promote_procedure(wrong.id).reason or ""
        assert "expected 'stop and report denied access', got 'decline'" in reason
        # A self-assigned kind or confidence is no success: only the outcome counts.
        plain = [mem.write(f"store-v2 call {n}", meta={"error": "argument-type"},
                           confidence=1.0).id or "" for n in range(2)]  # fmt: skip
        unearned = mem.propose_procedure(plain, REPAIR, {"error": "argument-type",
                                         "access": {"$ne": "denied"}}, CHECKS[:1])  # fmt: skip
        assert "has 0" in (mem.promote_procedure(unearned.id).reason or "")
        # Helpful feedback makes an episode a success.
        mem.feedback(plain, 1.0, query_concepts=[])
        assert mem.promote_procedure(unearned.id).status == "promoted"


def test_revise_supersedes_and_retire_is_reversible(store_target: Target) -> None:
    target = store_target()
    with Memory(target, agent_id="a") as mem:
        wins = _episodes(mem)[:2]
        steps = [*REPAIR, {"when": {"access": "denied"}, "do": DENIED}]
        first = mem.promote_procedure(mem.propose_procedure(wins, steps, SCOPED, CHECKS).id)
        more = mem.write("list_items(3) failed: argument type; wrapped it, it worked",
                         meta={"library": "store-v2", "error": "argument-type",
                               "outcome": "success"}).id or ""  # fmt: skip
        revised = mem.revise_procedure(first.id, steps=[*steps, "log the repair"], episodes=[more])
        assert revised.status == "promoted" and revised.version == 2
        assert revised.supersedes == first.id and revised.episodes == (*wins, more)
        # The old record left default reads; it is kept as superseded history.
        query = "wrap the scalar id argument"
        assert [i.id for i in mem.read(query, kinds=["procedural"]).items] == [revised.record_id]
        kept = mem.read(query, kinds=["procedural"], include_superseded=True).items
        assert {i.id: i.record.status for i in kept}[first.record_id or ""] == "superseded"
        # A revision that fails the gate leaves the version in force untouched.
        bad = mem.revise_procedure(revised.id, steps=REPAIR, preconditions={})
        assert bad.status == "rejected" and bad.version == 3
        assert _status(target, revised.record_id) == "active"

        retired = mem.retire_procedure(revised.id)
        assert retired.status == "retired"
        assert _status(target, revised.record_id) == "archived"
        back = mem.retire_procedure(revised.id, retired=False)
        assert back.status == "promoted"
        assert _status(target, revised.record_id) == "active"


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"episodes": [], "steps": REPAIR}, "episodes"),
        ({"episodes": "x", "steps": REPAIR}, "episodes"),
        ({"steps": []}, "steps"),
        ({"steps": [{"when": {}, "do": DENIED}]}, "steps"),
        ({"steps": REPAIR, "preconditions": {"error": {"$regex": "x"}}}, "preconditions"),
        ({"steps": REPAIR, "checks": [{"case": {}}]}, "checks"),
        ({"steps": REPAIR, "name": ""}, "name"),
    ],
)
def test_bad_input_names_its_field(arguments: dict[str, Any], field: str, tmp_path: Any) -> None:
    with Memory(str(tmp_path / "m.db")) as mem:
        wins = _episodes(mem)[:2]
        with pytest.raises(InvalidInput) as raised:
            mem.propose_procedure(**{"episodes": wins, **arguments})
        assert raised.value.field == field


def test_unknown_and_non_episode_references(tmp_path: Any) -> None:
    with Memory(str(tmp_path / "m.db")) as mem:
        fact = mem.write("store-v2 takes objects", kind="semantic").id or ""
        with pytest.raises(InvalidInput) as raised:
            mem.propose_procedure([fact], REPAIR)
        assert raised.value.field == "episodes"
        with pytest.raises(UnknownMemory):
            mem.propose_procedure(["nope"], REPAIR)
        with pytest.raises(UnknownMemory):
            mem.promote_procedure("nope")
    with Memory(str(tmp_path / "m.db"), agent_id="other") as other:
        with pytest.raises(UnknownMemory):
            other.propose_procedure([fact], REPAIR)


def test_retain_proposes_through_the_real_path(store_target: Target) -> None:
    with Memory(store_target(), agent_id="a") as mem:
        for outcome in ("success", "success", "failure"):
            mem.write(f"wrapped the id in an object: {outcome}", tags=["workflow"],
                      meta={"workflow": "wrap-id", "outcome": outcome,
                            "steps": ["wrap the id", "retry"]})  # fmt: skip
        (rule,) = [r for r in mem.retain(EXAMPLE_POLICY) if r["name"] == "repeated workflow"]
        (proposal,) = rule["proposals"]
        assert proposal["status"] == "candidate"
        assert mem.stats().by_kind.get("procedural") is None  # proposed, never promoted
        # Applied again, the same episodes give the same candidate, not a second one.
        (again,) = [r for r in mem.retain(EXAMPLE_POLICY) if r["name"] == "repeated workflow"]
        assert again["proposals"][0]["procedure"] == proposal["procedure"]
        # The gate sees the failed run of the workflow its preconditions cover.
        refused = mem.promote_procedure(proposal["procedure"])
        assert refused.status == "rejected"
        assert refused.counterexamples == tuple(proposal["counterexamples"])
        assert refused.steps == ("wrap the id", "retry")


def test_forget_takes_a_procedure_with_its_record_and_an_episode_with_it(
    store_target: Target,
) -> None:
    target = store_target()
    with Memory(target, agent_id="a") as mem:
        wins = _episodes(mem)[:2]
        steps = [*REPAIR, {"when": {"access": "denied"}, "do": DENIED}]
        promoted = mem.promote_procedure(mem.propose_procedure(wins, steps, SCOPED, CHECKS).id)
        other = mem.propose_procedure(wins, ["wrap every argument"], name="broad")
        assert mem.forget([promoted.record_id or ""]) == 1
        rows = raw_query(target, "SELECT id, episodes FROM procedures")
        assert [r[0] for r in rows] == [other.id] and promoted.id not in str(rows)
        everything = str(raw_query(target, "SELECT * FROM procedures"))
        assert "wrap the scalar id argument" not in everything
        mem.forget([wins[0]])
        ((episodes,),) = raw_query(target, "SELECT episodes FROM procedures")
        assert json.loads(episodes) == [wins[1]]
