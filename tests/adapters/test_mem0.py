"""The mem0-style facade, as mem0's documentation uses its ``Memory``, on both backends:
each user a scope of its own, ``agent_id`` / ``run_id`` narrowing within it, versions on
``update``, and nothing left by ``delete``."""

from __future__ import annotations

import pytest

from assocmem import InvalidInput, Memory, UnknownMemory
from assocmem.adapters.mem0 import Mem0Memory
from tests.conftest import Target

CHAT = [
    {"role": "user", "content": "I'm vegetarian and allergic to nuts."},
    {"role": "assistant", "content": "Noted: vegetarian, no nuts."},
]


def test_add_then_search_answers_in_mem0_s_shape(store_target: Target) -> None:
    with Mem0Memory(store_target("m")) as m:
        added = m.add(CHAT, user_id="alice", metadata={"category": "food"})
        assert [r["event"] for r in added["results"]] == ["ADD", "ADD"]
        assert [r["memory"] for r in added["results"]] == [c["content"] for c in CHAT]
        found = m.search("allergic to nuts", user_id="alice", limit=1)
        (best,) = found["results"]
        assert best["memory"] == CHAT[0]["content"] and best["user_id"] == "alice"
        assert best["metadata"] == {"category": "food", "role": "user"}
        assert best["score"] > 0 and best["why"]
        single = m.add("Likes hiking on weekends.", user_id="alice")
        assert m.get(single["results"][0]["id"], user_id="alice")["memory"] == (
            "Likes hiking on weekends."
        )


def test_each_user_is_a_scope_of_its_own(store_target: Target) -> None:
    target = store_target("users")
    with Mem0Memory(target) as m:
        m.add("Allergic to nuts.", user_id="alice")
        bob = m.add("Allergic to shellfish.", user_id="bob")["results"][0]["id"]
        assert [r["memory"] for r in m.search("allergic", user_id="alice")["results"]] == [
            "Allergic to nuts."
        ]
        assert [r["memory"] for r in m.get_all(user_id="alice")["results"]] == ["Allergic to nuts."]
        with pytest.raises(UnknownMemory):
            m.get(bob, user_id="alice")
        with pytest.raises(UnknownMemory):
            m.delete(bob, user_id="alice")
    with Memory(target, agent_id="bob") as mem:  # the scope is the user's, as assocmem sees it
        assert [r.text for r in mem.export()] == ["Allergic to shellfish."]


def test_agent_and_run_ids_narrow_within_a_user(store_target: Target) -> None:
    with Mem0Memory(store_target("runs")) as m:
        m.add("Booked the flight to Lisbon.", user_id="alice", agent_id="travel", run_id="r1")
        m.add("Asked about the hotel in Porto.", user_id="alice", agent_id="travel", run_id="r2")
        m.add("Prefers window seats.", user_id="alice")
        every = m.get_all(user_id="alice")["results"]
        assert len(every) == 3
        run = m.get_all(user_id="alice", run_id="r1")["results"]
        assert [r["memory"] for r in run] == ["Booked the flight to Lisbon."]
        assert run[0]["agent_id"] == "travel" and run[0]["run_id"] == "r1"
        m.delete_all(user_id="alice", run_id="r2")
        assert len(m.get_all(user_id="alice")["results"]) == 2
        m.add("Travel agent notes its own habit.", agent_id="travel")  # no user: the agent's
        assert [r["memory"] for r in m.get_all(agent_id="travel")["results"]] == [
            "Travel agent notes its own habit."
        ]


def test_update_keeps_versions_and_delete_leaves_none(store_target: Target) -> None:
    target = store_target("versions")
    with Mem0Memory(target) as m:
        first = m.add("Lives in Berlin.", user_id="alice")["results"][0]["id"]
        updated = m.update(first, "Lives in Munich.", user_id="alice")
        assert updated["message"] == "Memory updated successfully!" and updated["id"] != first
        assert m.get(first, user_id="alice")["memory"] == "Lives in Munich."
        assert [r["memory"] for r in m.search("where does alice live", user_id="alice")[
            "results"]] == ["Lives in Munich."]  # fmt: skip
        assert [v["memory"] for v in m.history(first, user_id="alice")] == [
            "Lives in Berlin.",
            "Lives in Munich.",
        ]
        m.delete(updated["id"], user_id="alice")
        assert m.get_all(user_id="alice")["results"] == []
    with Memory(target, agent_id="alice") as mem:
        assert list(mem.export()) == []


def test_bad_calls_are_refused_naming_the_field(store_target: Target) -> None:
    with Mem0Memory(store_target("bad")) as m:
        with pytest.raises(InvalidInput) as refused:
            m.add("no owner")
        assert refused.value.field == "user_id"
        with pytest.raises(InvalidInput) as refused:
            m.add([{"role": "user"}], user_id="alice")
        assert refused.value.field == "messages"
        with pytest.raises(InvalidInput) as refused:
            m.search("x", user_id="")
        assert refused.value.field == "user_id"
        assert m.get_all(user_id="alice")["results"] == []  # nothing half-stored
