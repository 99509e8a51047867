"""The operator gate on both backends: a caller without the operator role may not
declare as the operator, nor retract or delete what the operator declared; a refused
call changes nothing, and agent declarations stay the agent's to remove."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assocmem import AccessDenied, Memory, OperatorRequired, Scope
from assocmem.capabilities import open_store
from tests.conftest import Target

PLANT = {
    "entities": [{"name": "gateway"}, {"name": "billing"}],
    "relations": [{"subject": "gateway", "predicate": "calls", "object": "billing"}],
}


@pytest.fixture
def pair(store_target: Target) -> Iterator[tuple[Memory, Memory]]:
    """The same agent twice over one store: as the operator and as a plain agent."""
    store = open_store(store_target("gate"))
    owner = Memory.attached(store, Scope("ops"))
    yield owner, Memory.attached(store, owner.scope, operator=False)
    store.close()


def _world(owner: Memory) -> tuple[str, int]:
    note = owner.write("the gateway calls billing").id
    assert note
    declared = owner.declare(PLANT, anchor_ref=f"mem:{note}", declared_by="operator")
    return note, declared.relations[0]


def test_declaring_as_the_operator_needs_the_role(pair: tuple[Memory, Memory]) -> None:
    owner, agent = pair
    note = owner.write("the gateway calls billing").id
    with pytest.raises(OperatorRequired) as raised:
        agent.declare(PLANT, anchor_ref=f"mem:{note}", declared_by="operator")
    assert raised.value.field == "declared_by" and isinstance(raised.value, AccessDenied)
    assert owner.inspect(str(note)).mentions == ()  # nothing was declared
    assert agent.declare(PLANT, anchor_ref=f"mem:{note}").entities  # as an agent it may


def test_removing_operator_declarations_needs_the_role(pair: tuple[Memory, Memory]) -> None:
    owner, agent = pair
    note, relation = _world(owner)
    before = owner.inspect(note).to_dict()
    for call in (
        lambda: agent.retract(relation_ids=[relation]),
        lambda: agent.retract(mentions=[("gateway", f"mem:{note}")]),
        lambda: agent.delete_entity("billing"),
    ):
        with pytest.raises(OperatorRequired):
            call()
        assert owner.inspect(note).to_dict() == before  # a refusal changes nothing
    assert owner.retract(relation_ids=[relation]) == {"relations": 1, "mentions": 0}
    assert owner.delete_entity("billing") == 1


def test_an_agent_entity_carrying_an_operator_relation_is_guarded(
    pair: tuple[Memory, Memory],
) -> None:
    owner, agent = pair
    note = owner.write("the gateway calls billing").id
    agent.declare({"entities": [{"name": "gateway"}, {"name": "billing"}]}, f"mem:{note}")
    owner.declare({"relations": PLANT["relations"]}, declared_by="operator")
    with pytest.raises(OperatorRequired):
        agent.delete_entity("gateway")  # it would take the operator's relation along
    assert [e.name for e in owner.traverse("gateway").entities] == ["gateway", "billing"]


def test_agent_declarations_stay_the_agents_to_remove(pair: tuple[Memory, Memory]) -> None:
    owner, agent = pair
    note = owner.write("the gateway calls billing").id
    declared = agent.declare(PLANT, anchor_ref=f"mem:{note}")
    assert agent.retract(relation_ids=list(declared.relations))["relations"] == 1
    assert agent.retract(mentions=[("gateway", f"mem:{note}")])["mentions"] == 1
    assert agent.delete_entity("billing") == 1


def test_only_the_operator_reads_the_stores_sizes(pair: tuple[Memory, Memory]) -> None:
    owner, agent = pair
    owner.write("a note")
    assert owner.health().store_bytes is not None
    seen = agent.health()
    assert (seen.store_bytes, seen.wal_bytes) == (None, None) and seen.memories == 1
