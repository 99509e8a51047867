"""`update`: a memory's mutable fields changed by id, its text and index untouched."""

from __future__ import annotations

import pytest

from assocmem import InvalidInput, Memory, Scope, UnknownMemory


def test_update_changes_only_the_fields_given(mem: Memory) -> None:
    written = mem.write("The deploy timed out after the release.", tags=["ops"], meta={"a": 1})
    assert written.id is not None
    before = mem.get([written.id])[0]
    after = mem.update(written.id, tags=["ops", "incident"], value=2.5, meta={"b": 2})
    assert (after.tags, after.value, after.meta) == (("ops", "incident"), 2.5, {"b": 2})
    same = ("text", "concepts", "concept_forms", "observed_at", "created_at", "kind", "access")
    assert all(getattr(after, f) == getattr(before, f) for f in same)
    assert mem.get([written.id])[0] == after
    # The text is unchanged, so the lexical index still finds it, and meta is filterable.
    found = mem.read("deploy release", where={"b": 2})
    assert [i.id for i in found.items] == [written.id]
    assert mem.update(written.id, protected=True).protected is True


def test_update_validates_like_write(mem: Memory) -> None:
    written = mem.write("Cache warmed before the deploy.")
    assert written.id is not None
    for fields, field in (
        ({"value": -1.0}, "value"),
        ({"tags": "ops"}, "tags"),
        ({"meta": {"x": float("nan")}}, "meta"),
        ({"protected": "yes"}, "protected"),
        ({"access": [""]}, "access"),
        ({}, "fields"),
    ):
        with pytest.raises(InvalidInput) as caught:
            mem.update(written.id, **fields)
        assert caught.value.field == field
    assert mem.get([written.id])[0].value == 1.0


def test_another_tenants_id_is_unknown(mem: Memory) -> None:
    written = mem.write("Retried the request and it went through.")
    assert written.id is not None
    other = Memory.attached(mem._store, Scope("someone-else"))
    with pytest.raises(UnknownMemory):
        other.update(written.id, tags=["mine"])
    assert mem.get([written.id])[0].tags == ()


def test_a_new_access_list_moves_the_memory_to_that_class(mem: Memory) -> None:
    written = mem.write(
        "Backoff of two seconds fixed the flaky call.", concepts=["retry", "backoff"]
    )
    assert written.id is not None
    moved = mem.update(written.id, access=["admin"])
    assert moved.access == ("admin",)
    # Out of the plain reader's reach on every path, its co-occurrence gone with it.
    assert mem.read("backoff flaky call").items == ()
    assert mem.graph(["retry"]).edges == ()
    with pytest.raises(UnknownMemory):
        mem.update(written.id, tags=["x"])
    admin = Memory.attached(mem._store, Scope("ops", role="admin"))
    assert [i.id for i in admin.read("backoff flaky call").items] == [written.id]
    assert [e.count for e in admin.graph(["retry"]).edges] == [1]
    # And back: the plain reader finds it again.
    admin.update(written.id, access=[])
    assert [i.id for i in mem.read("backoff flaky call").items] == [written.id]
