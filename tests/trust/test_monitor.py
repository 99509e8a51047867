"""monitor (per-source CUSUM, persisted cases) and spend_irreversible (lifetime budgets)."""

from __future__ import annotations

import multiprocessing
from typing import Any

import pytest

from assocmem import InvalidInput, Memory
from tests.conftest import Target


def test_a_careless_source_raises_one_case_that_survives_a_restart(store_target: Target) -> None:
    db = store_target()
    with Memory(db) as mem:
        bad = mem.write("poisoned advice", source="https://evil.example.org/a").id or ""
        fine = mem.write("sound advice", source="good.example.com").id or ""
        for _ in range(2):
            result = mem.monitor([bad], "bad", k=0.1, h=4.0)
            assert not result.raised
        mem.monitor([fine], "good")
        assert mem.cases() == []
    # A new session (a drip across restarts) continues the same statistic.
    with Memory(db) as mem:
        result = mem.monitor([bad], "bad")
        assert [s.statistic for s in result.sources] == [pytest.approx(2.7)]
        assert not mem.monitor([bad], "bad").raised  # 3.6 < h
        raised = mem.monitor([bad], -1)  # 4.5 >= h
        opened = mem.cases()
    assert raised.raised == tuple(opened)
    assert len(opened) == 1 and opened[0].source == result.sources[0].source
    assert opened[0].statistic >= 4.0 and bad in opened[0].evidence
    # A further breach does not stack cases, and nothing was slashed automatically.
    with Memory(db) as mem:
        assert not mem.monitor([bad], "bad").raised and len(mem.cases()) == 1
        assert mem.monitor([bad], "bad").slashed == ()


def test_a_below_k_drip_is_never_caught(store_target: Target) -> None:
    with Memory(store_target()) as mem:
        drip = mem.write("subtle", source="drip.example.net").id or ""
        for step in range(200):
            mem.monitor([drip], "bad" if step % 20 == 0 else "good", k=0.1, h=4.0)
        assert mem.cases() == []  # the documented limit: k is a price, not a wall


def test_monitor_arguments_name_their_field() -> None:
    with Memory(":memory:") as mem:
        known = mem.write("a note").id or ""
        for kwargs, field in (
            ({"outcome": "meh"}, "outcome"),
            ({"outcome": "bad", "k": -1}, "k"),
            ({"outcome": "bad", "h": 0}, "h"),
            ({"outcome": "bad", "auto_slash": "yes"}, "auto_slash"),
        ):
            with pytest.raises(InvalidInput) as caught:
                mem.monitor([known], **kwargs)  # type: ignore[arg-type]
            assert caught.value.field == field


def test_the_tightest_source_binds_and_nothing_is_charged(store_target: Target) -> None:
    with Memory(store_target()) as mem:
        a = mem.write("from a", source="alpha.com").id or ""
        b = mem.write("from b", source="beta.org").id or ""
        assert mem.spend_irreversible([a], 4, budget=5).allowed
        # a has 1 left, b has 5: a spend using both is denied whole.
        denied = mem.spend_irreversible([a, b], 2, budget=5)
        assert not denied.allowed and denied.binding == ("alpha.com",)
        assert {s.source: s.spent for s in denied.sources} == {
            "alpha.com": 4.0, "beta.org": 0.0,
        }  # fmt: skip
        allowed = mem.spend_irreversible([b], 5, budget=5)
        assert allowed.allowed and allowed.sources[0].remaining == 0.0
        assert not mem.spend_irreversible([b], 0.5, budget=5).allowed


def test_spend_arguments_name_their_field() -> None:
    with Memory(":memory:") as mem:
        known = mem.write("a note").id or ""
        for ids, amount, budget, field in (
            (known, 1, 1, "ids"),
            ([known], 0, 1, "amount"),
            ([known], float("nan"), 1, "amount"),
            ([known], 1, -1, "budget"),
        ):
            with pytest.raises(InvalidInput) as caught:
                mem.spend_irreversible(ids, amount, budget)  # type: ignore[arg-type]
            assert caught.value.field == field


WORKERS = 4


def _spender(db: str, memory_id: str, barrier: Any) -> int:
    with Memory(db, agent_id="team") as mem:
        barrier.wait()
        return sum(mem.spend_irreversible([memory_id], 1, budget=10).allowed for _ in range(5))


@pytest.mark.slow
def test_two_processes_cannot_both_spend_the_last_unit(store_target: Target) -> None:
    db = store_target("shared")
    with Memory(db, agent_id="team") as mem:
        memory_id = mem.write("shared", source="shared.example.com").id or ""
    context = multiprocessing.get_context("spawn")
    barrier = context.Manager().Barrier(WORKERS)
    with context.Pool(WORKERS) as pool:
        jobs = [pool.apply_async(_spender, (db, memory_id, barrier)) for _ in range(WORKERS)]
        allowed = sum(job.get(timeout=300) for job in jobs)
    with Memory(db, agent_id="team") as mem:
        left = mem.spend_irreversible([memory_id], 1, budget=10)
    assert allowed == 10 and not left.allowed and left.sources[0].spent == 10.0


def test_derived_slices_accumulate_against_their_origin(store_target: Target) -> None:
    with Memory(store_target()) as mem:
        origin = mem.write("the poisoned source", source="poison.example.org").id or ""
        slices = [mem.write(f"summary {i}", derived_from=[origin]).id or "" for i in range(5)]
        for piece in slices:
            result = mem.monitor([piece], "bad", k=0.1, h=4.0, auto_slash=True)
        (case,) = mem.cases()
        standing = mem.standing([origin])
    assert case.source == "example.org" and set(case.evidence) == set(slices)
    assert result.slashed == ("example.org",) and standing[0].slashed


def test_a_spend_is_charged_through_the_taint(store_target: Target) -> None:
    with Memory(store_target()) as mem:
        origin = mem.write("the origin", source="origin.example.org").id or ""
        summary = mem.write("its summary", source="notes.example.com",
                            derived_from=[origin]).id or ""  # fmt: skip
        spent = mem.spend_irreversible([summary], 3, budget=3)
        assert [s.source for s in spent.sources] == ["example.com", "example.org"]
        # The origin's budget is exhausted by the summary's spend: no reuse of it.
        denied = mem.spend_irreversible([origin], 1, budget=3)
        mem.slash([origin], scope="source")
        mem.restore([origin], scope="source")  # restore never refunds
        still = mem.spend_irreversible([origin], 1, budget=3)
    assert not denied.allowed and denied.binding == ("example.org",)
    assert not still.allowed
