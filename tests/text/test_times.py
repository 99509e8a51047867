"""Stored times: the range, the fixed-width form, arithmetic at the range's ends, and
the repair of stores that hold an unpadded year.

Invariant checked: every time a caller gives is stored as 27 characters whose string
order is time order, or refused as `InvalidTime` naming its field; nothing read back
from a store, repaired or new, raises anything else.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assocmem import InvalidInput, InvalidTime, Memory
from assocmem.text import times
from tests.conftest import Target

LATEST = "9999-12-31T23:59:59.999999Z"
EARLIEST = "0001-01-01T00:00:00.000000Z"
# The repair's migration, by backend: deleting its record makes a store look as one
# written before it, so reopening applies it to the rows broken by hand.
REPAIR = {"sqlite": "0019_padded_years", "postgres": "0020_padded_years"}
# A time UTC cannot hold: a valid local time whose offset carries it past an end.
PAST_THE_END = ["9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+01:00"]


@given(st.lists(st.datetimes(timezones=st.timezones()), min_size=2, max_size=5))
def test_string_order_is_time_order_across_the_range(moments: list[datetime]) -> None:
    stored = []
    for moment in moments:
        given_time = moment.isoformat()
        instant = datetime.fromisoformat(given_time)  # a fixed offset: no gaps or folds
        try:
            stored.append((instant, times.parse_time(given_time, field="observed_at")))
        except InvalidTime as refused:  # only a time past an end, once in UTC
            assert refused.field == "observed_at"
            with pytest.raises(OverflowError):
                instant.astimezone(UTC)
    assert all(len(text) == 27 for _, text in stored)
    assert sorted(text for _, text in stored) == [text for _, text in sorted(stored)]
    assert all(times.to_datetime(text) == instant for instant, text in stored)


@pytest.mark.parametrize(
    ("given_time", "stored"),
    [
        ("0999-01-01T00:00:00Z", "0999-01-01T00:00:00.000000Z"),
        ("0001-01-01T00:00:00Z", EARLIEST),
        ("0010-06-01T12:00:00+02:00", "0010-06-01T10:00:00.000000Z"),
        # the unpadded form older versions stored, as an old export holds it
        ("999-01-01T00:00:00.000000Z", "0999-01-01T00:00:00.000000Z"),
    ],
)
def test_years_before_1000_are_stored_padded(given_time: str, stored: str) -> None:
    assert times.parse_time(given_time, field="observed_at") == stored
    assert times.format_time(times.to_datetime(stored)) == stored


@pytest.mark.parametrize("given_time", PAST_THE_END)
def test_a_time_utc_cannot_hold_is_invalid_time(given_time: str) -> None:
    with pytest.raises(InvalidTime) as refused:
        times.parse_time(given_time, field="as_of")
    assert refused.value.field == "as_of" and "0001-01-01" in str(refused.value)
    aware = datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5)))
    with pytest.raises(InvalidTime):
        times.parse_time(aware, field="as_of")


@pytest.mark.parametrize(
    ("start", "days", "due"),
    [
        ("9999-12-30T00:00:00.000000Z", 7, LATEST),
        ("2024-01-01T00:00:00.000000Z", 1e300, LATEST),
        ("2024-01-01T00:00:00.000000Z", float("inf"), LATEST),
        ("0001-01-02T00:00:00.000000Z", -7, EARLIEST),
        ("0999-12-31T00:00:00.000000Z", 1, "1000-01-01T00:00:00.000000Z"),
    ],
)
def test_adding_days_holds_at_the_ends(start: str, days: float, due: str) -> None:
    assert times.add_days(start, days) == due


def test_a_write_past_the_end_is_refused_naming_the_field(store_target: Target) -> None:
    with Memory(store_target(), agent_id="ops") as mem:
        for field in ("observed_at", "verified_at", "recheck_by"):
            with pytest.raises(InvalidTime) as refused:
                mem.write("the deploy failed", **{field: "9999-12-31T23:59:59-05:00"})
            assert refused.value.field == field
        with pytest.raises(InvalidTime) as refused:
            mem.read("deploy", as_of="0001-01-01T00:00:00+01:00")
        assert refused.value.field == "as_of"
        assert mem.stats().memories == 0


def test_early_and_late_times_are_read_back_in_order(store_target: Target) -> None:
    with Memory(store_target(), agent_id="ops") as mem:
        ids = {
            when: mem.write(f"the deploy failed at {when}", observed_at=when).id
            for when in ("0999-01-01T00:00:00Z", "0005-03-01T00:00:00Z", LATEST, EARLIEST)
        }
        mem.write("the deploy failed today")
        for as_of in (None, EARLIEST, LATEST):
            assert len(mem.read("deploy failed", k=10, as_of=as_of).items) == 5
        early = mem.read("deploy failed", k=10, where={"observed_at": {"$lt": "1000-01-01"}})
        assert {item.record.id for item in early.items} == {
            ids["0999-01-01T00:00:00Z"],
            ids["0005-03-01T00:00:00Z"],
            ids[EARLIEST],
        }
        by_id = {record.id: record for record in mem.export()}
        assert by_id[ids["0005-03-01T00:00:00Z"]].observed_at == "0005-03-01T00:00:00.000000Z"
        assert mem.consolidate(keep=2).archived  # the keep-budget's decay ages them all


def test_a_recheck_past_the_year_9999_is_held_at_the_end(store_target: Target) -> None:
    with Memory(store_target(), agent_id="ops") as mem:
        late = mem.write("a fact", kind="semantic", observed_at="9999-12-30T00:00:00Z").id
        rule = {"match": {"kind": "semantic"}, "recheck_after_days": 7}
        mem.retain({"rules": [rule]})
        assert mem.get([late])[0].recheck_by == LATEST
        with pytest.raises(InvalidInput) as refused:
            mem.retain({"rules": [{**rule, "recheck_after_days": float("nan")}]})
        assert refused.value.field == "policy"


def test_an_import_line_past_the_end_is_reported_the_rest_imported(
    store_target: Target,
) -> None:
    with Memory(store_target(), agent_id="ops") as mem:
        report = mem.import_lines([
            {"text": "kept", "observed_at": "0999-01-01T00:00:00Z"},
            {"text": "refused", "created_at": "9999-12-31T23:59:59-05:00"},
            {"line": "link", "a": "backoff", "b": "deploy", "weight": 1.0, "count": 1,
             "updated_at": "0001-01-01T00:00:00Z"},
        ])  # fmt: skip
        assert report.imported == {"record": 1, "link": 1}
        assert [(e.line, e.field) for e in report.errors] == [(2, "created_at")]
        assert [r.observed_at for r in mem.export()] == ["0999-01-01T00:00:00.000000Z"]
        assert mem.read("kept").items


def sql(target: str, statement: str) -> list[tuple[Any, ...]]:
    """One statement on the store's database itself, committed (bypassing assocmem)."""
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            cursor = conn.execute(statement)
            return list(cursor.fetchall()) if cursor.description else []
    conn = sqlite3.connect(target, isolation_level=None)  # autocommit
    try:
        return list(conn.execute(statement).fetchall())
    finally:
        conn.close()


def _break(target: str, backend: str, table: str, column: str, guard: str | None) -> None:
    """Store ``column``'s times in the form older versions gave a year below 1000."""
    unpadded = f"UPDATE {table} SET {column} = '999' || substr({column}, 5)"
    if guard is None:
        sql(target, unpadded)
    elif backend == "sqlite":  # the append-only log's guard, stepped around
        body = sql(target, f"SELECT sql FROM sqlite_master WHERE name = '{guard}'")[0][0]
        sql(target, f"DROP TRIGGER {guard}")
        sql(target, unpadded)
        sql(target, body)
    else:
        sql(target, f"ALTER TABLE {table} DISABLE TRIGGER {guard}")
        sql(target, unpadded)
        sql(target, f"ALTER TABLE {table} ENABLE TRIGGER {guard}")


BROKEN = [
    ("memories", "observed_at", None),
    ("memories", "verified_at", None),
    ("memories", "recheck_by", None),
    ("memories", "created_at", None),
    ("memories", "accessed_at", None),
    ("feedback", "created_at", "feedback_append_only"),
    ("entities", "created_at", None),
    ("relations", "declared_at", None),
]


def test_a_store_holding_unpadded_years_is_repaired_when_opened(
    store_target: Target, backend: str
) -> None:
    target = store_target()
    with Memory(target, agent_id="ops") as mem:
        first = mem.write("the deploy failed", concepts=["deploy"], verified_at=LATEST,
                          recheck_by=LATEST).id  # fmt: skip
        second = mem.write("the deploy worked", concepts=["deploy"]).id
        assert first and second
        mem.feedback([first], 1.0, query_concepts=[])
        relation = {"subject": "deploy", "predicate": "is", "object": "risky"}
        mem.declare({"relations": [relation]}, anchor_ref=f"mem:{first}")
    sql(target, "UPDATE memories SET accessed_at = created_at")  # as a read in its window does
    for table, column, guard in BROKEN:
        _break(target, backend, table, column, guard)
    sql(target, f"DELETE FROM schema_migrations WHERE name = '{REPAIR[backend]}'")
    with Memory(target, agent_id="ops") as mem:
        assert {item.record.id for item in mem.read("deploy").items} == {first, second}
        records = mem.get([first, second])
        assert [r.observed_at[:4] for r in records] == ["0999", "0999"]
        assert records[0].verified_at == records[0].recheck_by == "0999-12-31T23:59:59.999999Z"
        assert mem.resolve("deploy", "is") == ["risky"]
        assert len(list(mem.export_all())) > 2
    for table, column, _ in BROKEN:
        held = sql(target, f"SELECT {column} FROM {table} WHERE {column} IS NOT NULL")
        assert held and all(len(t) == 27 and t.startswith("0999-") for (t,) in held), table
