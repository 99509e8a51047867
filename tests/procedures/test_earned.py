"""Earned reinforcement and graduation on both backends: value gained in proportion
to relevance (a weak, frequent false positive does not go immortal), default reads
unchanged, and episodes graduating to semantic only when corroborated."""

from __future__ import annotations

import pytest

from assocmem import InvalidInput, Memory
from assocmem.links import reinforce
from tests.conftest import Target

AS_OF = "2030-01-01T00:00:00+00:00"
FILLER = [f"the {w} report was filed on time by the team" for w in
          ("budget", "travel", "hiring", "audit", "sales", "support")]  # fmt: skip


def _value(mem: Memory, memory_id: str) -> float:
    (record,) = mem.get([memory_id])
    return record.value


def test_reinforcement_follows_relevance(store_target: Target) -> None:
    with Memory(store_target(), agent_id="a", reinforce=True) as mem:
        top = mem.write("the deploy key rotates every monday").id or ""
        # Shares only "the team" with the reports: found, weakly, on every read of them.
        weak = mem.write("gardening notes: tomatoes, compost, the team, and cooking plans").id or ""
        for text in FILLER:
            mem.write(text)
        for _ in range(10):
            assert mem.read("deploy key rotates monday", k=3).items[0].id == top
        top_gain = _value(mem, top) - 1.0
        weak_gain_before = _value(mem, weak) - 1.0
        low_ranks = []
        for _ in range(100):
            items = [i.id for i in mem.read("budget report filed on time", k=10).items]
            low_ranks.append(items.index(weak) if weak in items else None)
        weak_gain = _value(mem, weak) - 1.0 - weak_gain_before
        assert all(rank is not None and rank >= 3 for rank in low_ranks), low_ranks
        assert top_gain > 0.3
        assert 0 < weak_gain < top_gain / 5
        assert _value(mem, top) < reinforce.CAP


def test_reinforcement_has_diminishing_returns_and_a_cap(store_target: Target) -> None:
    with Memory(store_target(), agent_id="a", reinforce=True) as mem:
        fact = mem.write("the deploy key rotates every monday").id or ""
        gains = []
        for _ in range(60):
            before = _value(mem, fact)
            mem.read("deploy key rotates monday")
            gains.append(_value(mem, fact) - before)
        assert gains[0] > gains[-1] > 0
        assert _value(mem, fact) < reinforce.CAP
        heavy = mem.write("the backup runs nightly", value=5.0).id or ""
        mem.read("backup runs nightly")
        assert _value(mem, heavy) == 5.0  # never lowered, never past its own value


def test_default_reads_are_identical(store_target: Target) -> None:
    with Memory(store_target(), agent_id="a") as mem:
        for text in ["the deploy key rotates every monday", *FILLER]:
            mem.write(text)
        # A fixed as_of: decay is measured at one moment, so only drift could differ.
        first = mem.read("deploy key report", as_of=AS_OF)
        for _ in range(5):
            again = mem.read("deploy key report", as_of=AS_OF)
            assert again == first  # the same items and figures; each read its own handle
        assert {r.value for r in mem.export()} == {1.0}
    with pytest.raises(InvalidInput) as raised:
        Memory(reinforce="yes")  # type: ignore[arg-type]
    assert raised.value.field == "reinforce"


def test_graduation_needs_corroboration(store_target: Target) -> None:
    with Memory(store_target(), agent_id="a") as mem:
        helped = mem.write("the staging db restarts at 02:00").id or ""
        credited = mem.write("the cache is flushed on deploy").id or ""
        twice = mem.write("the api limit is 100 rps", source="https://docs.example.com/a").id or ""
        mem.write("The API limit is 100 rps", source="https://status.other.org/x")
        same_site = mem.write("the queue holds 1k jobs", source="https://a.example.com").id or ""
        mem.write("the queue holds 1k jobs!", source="https://b.example.com")
        confident = mem.write("the moon is cheese", confidence=1.0, value=9.0).id or ""
        unhelped = mem.write("the printer is on floor 2").id or ""
        mem.feedback([helped], 0.8, query_concepts=[])
        mem.feedback([unhelped], -0.5, query_concepts=[])
        mem.credit([credited], "good")

        report = mem.graduate()
        moved = {g.id: g for g in report.graduated}
        assert moved[helped].basis == ("helpful_feedback",)
        assert moved[credited].basis == ("credited",)
        assert moved[twice].basis == ("corroborated",)
        assert len(moved[twice].evidence["origins"]) == 2
        assert {same_site, confident, unhelped}.isdisjoint(moved)
        kinds = {r.id: r.kind for r in mem.get([helped, credited, twice, same_site, confident])}
        assert kinds == {helped: "semantic", credited: "semantic", twice: "semantic",
                         same_site: "episodic", confident: "episodic"}  # fmt: skip
        # Graduated once: a second pass moves nothing more.
        assert {g.id for g in mem.graduate().graduated}.isdisjoint(moved)

        undone = mem.ungraduate([helped, same_site])
        assert undone.changed == (helped,) and same_site in undone.skipped
        assert mem.get([helped])[0].kind == "episodic"


def test_slashed_memories_do_not_graduate(store_target: Target) -> None:
    with Memory(store_target(), agent_id="a") as mem:
        claim = mem.write("the vpn is down", source="https://one.example.net").id or ""
        mem.write("The vpn is down", source="https://two.example.org")
        mem.feedback([claim], 1.0, query_concepts=[])
        mem.slash([claim], scope="memory")
        assert claim not in {g.id for g in mem.graduate().graduated}
