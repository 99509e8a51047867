"""mem0's scopes in assocmem's terms: user_id is the agent (the tenant), agent_id a
project or channel, run_id the thread, filtered with ``where`` on every path."""

from __future__ import annotations

from assocmem import Memory, Scope


def test_a_run_is_a_thread_filter_on_read_archive_and_forget(mem: Memory) -> None:
    mem.write_many([
        {"text": "The user prefers green tea.", "thread": "run-1"},
        {"text": "The user prefers black tea now.", "thread": "run-2"},
        {"text": "Tea is brewed at 80 degrees.", "thread": "run-2"},
    ])  # fmt: skip
    in_run = mem.read("tea", where={"thread": "run-2"})
    assert {i.text for i in in_run.items} == {
        "The user prefers black tea now.", "Tea is brewed at 80 degrees.",
    }  # fmt: skip
    assert len(mem.archive(where={"thread": "run-1"}).changed) == 1
    assert {i.text for i in mem.read("tea").items} == {i.text for i in in_run.items}
    assert mem.forget(where={"thread": "run-2"}) == 2
    assert mem.read("tea").items == ()


def test_a_user_is_an_agent_and_sees_only_its_own(mem: Memory) -> None:
    mem.write("Alice likes sushi.", thread="run-1")
    bob = Memory.attached(mem._store, Scope("bob", project_id="assistant"))
    bob.write("Bob likes pizza.", thread="run-1")
    assert [i.text for i in bob.read("likes", where={"thread": "run-1"}).items] == [
        "Bob likes pizza."
    ]
    assert [i.text for i in mem.read("likes", where={"thread": "run-1"}).items] == [
        "Alice likes sushi."
    ]
