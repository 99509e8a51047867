"""Seed 001's checked source: an operator names the sources evidence mode counts as
checked, per scope; with none named any named source counts, as before. Both backends."""

from __future__ import annotations

import pytest

from assocmem import InvalidInput, Memory, OperatorRequired
from tests.conftest import Target

DAY = "2024-01-01T00:00:00Z"
AS_OF = "2024-01-05T00:00:00Z"


def _facts(mem: Memory) -> tuple[str, str]:
    """The current guide from the docs site, and a forum tip; both semantic, verified."""
    guide = mem.write("Store v2 takes the item id as its first argument.", kind="semantic",
                      source="https://docs.example.com/store/v2", observed_at=DAY,
                      verified_at=DAY).id  # fmt: skip
    tip = mem.write("Store v2 takes the item id as a keyword argument.", kind="semantic",
                    source="forum.example.net", observed_at=DAY, verified_at=DAY,
                    confidence=0.95).id  # fmt: skip
    assert guide and tip
    return guide, tip


def _admitted(mem: Memory) -> set[str]:
    read = mem.read("store v2 item id argument", mode="evidence", as_of=AS_OF)
    return {i.id for i in read.items}


def test_with_none_named_any_named_source_counts(store_target: Target) -> None:
    with Memory(store_target("default"), agent_id="ops") as mem:
        guide, tip = _facts(mem)
        assert mem.checked_sources() == []
        assert _admitted(mem) == {guide, tip}


def test_named_sources_are_the_only_checked_ones(store_target: Target) -> None:
    with Memory(store_target("named"), agent_id="ops") as mem:
        guide, tip = _facts(mem)
        named = mem.set_checked_sources(["https://docs.example.com/", "docs.example.com"])
        assert named == mem.checked_sources() == ["example.com"]  # canonical, once
        assert _admitted(mem) == {guide}
        read = mem.read("store v2 item id argument", mode="evidence", as_of=AS_OF)
        assert read.gates["unchecked_source"] == [tip]  # and the report says why
        assert mem.set_checked_sources([]) == [] and _admitted(mem) == {guide, tip}


def test_checked_sources_follow_the_scopes_a_read_sees(store_target: Target) -> None:
    target = store_target("scoped")
    with Memory(target, agent_id="ops", project_id="store") as project, \
            Memory(target, agent_id="ops") as shared, \
            Memory(target, agent_id="ops", project_id="billing") as billing, \
            Memory(target, agent_id="other") as other:  # fmt: skip
        guide, tip = _facts(shared)  # in the shared pool every project reads
        project.set_checked_sources(["docs.example.com"])
        assert _admitted(project) == {guide}
        assert _admitted(shared) == _admitted(billing) == {guide, tip}  # named for "store" only
        shared.set_checked_sources(["forum.example.net"])
        assert project.checked_sources() == ["example.com", "example.net"]  # its own and shared
        assert billing.checked_sources() == ["example.net"] and _admitted(billing) == {tip}
        assert other.checked_sources() == []  # another agent's list is never read


def test_naming_is_the_operators_and_bad_names_are_refused(store_target: Target) -> None:
    with Memory(store_target("refused"), agent_id="ops") as mem:
        agent = Memory.attached(mem._store, mem.scope, operator=False)
        with pytest.raises(OperatorRequired):
            agent.set_checked_sources(["docs.example.com"])
        assert agent.checked_sources() == []
        for bad in ("docs.example.com", [""], [7], ["x" * 3000], None):
            with pytest.raises(InvalidInput) as caught:
                mem.set_checked_sources(bad)  # type: ignore[arg-type]
            assert caught.value.field == "sources"
        assert mem.checked_sources() == []
