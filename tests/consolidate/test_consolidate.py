"""The dream pass, cluster-triggered consolidation and value by cohort (seed 003's five
rules), on both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from assocmem import InvalidInput, Memory
from tests.conftest import Target, raw_query

NOW = datetime.now(UTC)


def ago(days: float) -> str:
    return (NOW - timedelta(days=days)).isoformat()


def rows(target: str) -> dict[str, tuple[str, str]]:
    """Every memory's (text, status), read from the database itself."""
    return {i: (t, s) for i, t, s in raw_query(target, "SELECT id, text, status FROM memories")}


def statuses(target: str, ids: list[str]) -> list[str]:
    found = rows(target)
    return [found[i][1] for i in ids]


def test_dream_pass_links_and_supersedes_without_rewriting(store_target: Target) -> None:
    target = store_target("dream")
    with Memory(target, agent_id="a") as mem:
        on = mem.write("the feature flag is on", observed_at=ago(3)).id or ""
        off = mem.write("the feature flag is off", observed_at=ago(2)).id or ""
        other = mem.write("the billing flag is off", observed_at=ago(1)).id or ""
        one = mem.write("deploy failed on tuesday: the cache layer timed out").id or ""
        two = mem.write("the deploy failed on tuesday, the cache layer timed out!").id or ""
        far = mem.write("the cache layer was rebuilt on friday").id or ""
        texts = {i: text for i, (text, _) in rows(target).items()}

        report = mem.consolidate()

        assert report.superseded == (on,)
        assert report.duplicate_links == 1
        assert report.archived == () and report.hubs == ()
        assert (report.active_before, report.active_after) == (6, 5)
        assert statuses(target, [on, off, other, one, two, far]) == ["superseded"] + ["active"] * 5
        assert {i: t for i, (t, _) in rows(target).items()} == texts  # nothing merged, rewritten
        again = mem.consolidate()
        assert (again.duplicate_links, again.superseded, again.hubs) == (0, (), ())
        # A forgotten memory takes its derived rows with it; the pass still runs.
        assert mem.forget([two]) == 1
        assert mem.consolidate().duplicate_links == 0


def test_toggle_guard_needs_one_subject_and_spares_the_protected(store_target: Target) -> None:
    target = store_target("toggle")
    with Memory(target, agent_id="a") as mem:
        kept = mem.write("the maintenance mode is enabled", observed_at=ago(5), protected=True)
        mem.write("maintenance mode is disabled", observed_at=ago(4))
        lamp = mem.write("the lamp is on", observed_at=ago(3)).id or ""
        door = mem.write("the door is not open", observed_at=ago(2)).id or ""
        report = mem.consolidate()
        assert report.superseded == ()
        assert statuses(target, [kept.id or "", lamp, door]) == ["active"] * 3
        newer = mem.write("the lamp is not on", observed_at=ago(1)).id or ""
        assert mem.consolidate().superseded == (lamp,)
        assert statuses(target, [lamp, newer]) == ["superseded", "active"]


def test_restore_undoes_a_toggle_and_a_later_pass_leaves_it(store_target: Target) -> None:
    target = store_target("toggle-undo")
    with Memory(target, agent_id="a") as mem:
        lamp = mem.write("the lamp is on", observed_at=ago(3)).id or ""
        newer = mem.write("the lamp is not on", observed_at=ago(1)).id or ""
        keyed = mem.write("the gate is open", key=("gate", "state"), observed_at=ago(3)).id or ""
        mem.write("the gate is shut", key=("gate", "state"), observed_at=ago(1))
        assert mem.consolidate().superseded == (lamp,)
        undone = mem.restore([lamp, keyed])
        assert undone.changed == (lamp,) and undone.skipped == {keyed: "superseded"}
        assert statuses(target, [lamp, newer, keyed]) == ["active", "active", "superseded"]
        assert mem.consolidate().superseded == ()
        assert statuses(target, [lamp]) == ["active"]


def test_keep_budget_keeps_the_cold_load_bearing_fact(store_target: Target) -> None:
    target = store_target("budget")
    with Memory(target, agent_id="a") as mem:
        rule = mem.write(
            "never run the migration without a backup", kind="procedural", value=5.0,
            observed_at=ago(300),
        ).id or ""  # fmt: skip
        fact = mem.write(
            "the backup bucket lives in eu-west-2", kind="semantic", value=4.0,
            observed_at=ago(120),
        ).id or ""  # fmt: skip
        shield = mem.write("an old chat about lunch", observed_at=ago(400), protected=True)
        chatter = [
            mem.write(f"chat message number {i} about the weather", observed_at=ago(i % 5)).id or ""
            for i in range(10)
        ]
        for _ in range(3):
            mem.read("chat message weather")  # popular, but popularity is not value

        report = mem.consolidate(keep=5)

        assert len(report.archived) == 8 and report.active_after == 5
        assert statuses(target, [rule, fact, shield.id or ""]) == ["active"] * 3
        assert set(report.archived) <= set(chatter)
        assert mem.stats().by_status.get("archived") == 8
        assert mem.consolidate(keep=5).archived == ()
        assert set(mem.restore(list(report.archived)).changed) == set(report.archived)


def test_hubs_are_flagged_not_hidden(store_target: Target) -> None:
    with Memory(store_target("hubs"), agent_id="a") as mem:
        for i in range(30):
            mem.write(f"note {i} on its own topic", concepts=[f"topic{i}", f"detail{i}"])
        hub = mem.write(
            "a page that mentions everything", concepts=[f"topic{i}" for i in range(30)]
        )
        before = [i.id for i in mem.read("topic7 detail7").items]
        report = mem.consolidate()
        assert report.hubs == (hub.id,)
        assert mem.consolidate().hubs == ()
        assert [i.id for i in mem.read("topic7 detail7").items] == before


def test_clusters_consolidate_only_dense_topics(store_target: Target) -> None:
    target = store_target("clusters")
    with Memory(target, agent_id="a") as mem:
        dense = [
            mem.write(f"kubernetes pod {i} restarted", concepts=["kubernetes", f"pod{i}"],
                      observed_at=ago(i), value=1.0 + i).id or ""
            for i in range(8)
        ]  # fmt: skip
        sparse = [
            mem.write(f"postgres vacuum run {i}", concepts=["postgres", f"run{i}"]).id or ""
            for i in range(3)
        ]
        for i in range(10):
            mem.write(f"stray thought {i}", concepts=[f"stray{i}"])
        report = mem.consolidate_clusters(threshold=5)
        by_topic = {c.topic: c for c in report.clusters}
        assert by_topic["kubernetes"].consolidated and by_topic["kubernetes"].size == 8
        assert len(by_topic["kubernetes"].archived) == 3
        assert not by_topic["postgres"].consolidated
        assert statuses(target, sparse) == ["active"] * 3
        assert statuses(target, dense[5:]) == ["active"] * 3  # the highest value stays
        assert mem.consolidate_clusters(threshold=5).clusters[0].archived == ()


def test_value_by_cohort_reports_cohorts_never_memories(store_target: Target) -> None:
    with Memory(store_target("cohort"), agent_id="a") as mem:
        a = mem.write("alpha", tags=["ops"], value=2.0, observed_at="2026-01-05T10:00:00Z")
        b = mem.write("beta", tags=["ops", "db"], value=4.0, observed_at="2026-02-02T10:00:00Z")
        mem.write("gamma", observed_at="2026-02-03T10:00:00Z")
        mem.feedback([a.id or "", b.id or ""], 1.0, query_concepts=[])
        mem.feedback([b.id or ""], -0.5, query_concepts=[])
        tags = {c.cohort: c for c in mem.value_by_cohort().cohorts}
        assert set(tags) == {"ops", "db", "(untagged)"}
        assert (tags["ops"].memories, tags["ops"].mean_value) == (2, 3.0)
        assert (tags["ops"].ratings, tags["ops"].helpful, tags["ops"].harmful) == (3, 2, 1)
        assert tags["ops"].mean_outcome == pytest.approx(0.5)
        assert tags["(untagged)"].mean_outcome is None
        months = {c.cohort: c.memories for c in mem.value_by_cohort("month").cohorts}
        assert months == {"2026-01": 1, "2026-02": 2}
        weeks = {c.cohort: c.memories for c in mem.value_by_cohort(by="week").cohorts}
        assert weeks == {"2026-W02": 1, "2026-W06": 2}
        assert (a.id or "") not in str(mem.value_by_cohort().to_dict())


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda m: m.consolidate(keep=-1), "keep"),
        (lambda m: m.consolidate(keep=True), "keep"),
        (lambda m: m.consolidate_clusters(threshold=1), "threshold"),
        (lambda m: m.value_by_cohort(by="day"), "by"),
    ],
)
def test_bad_arguments_name_their_field(call: object, field: str) -> None:
    with Memory(":memory:", agent_id="a") as mem, pytest.raises(InvalidInput) as raised:
        call(mem)  # type: ignore[operator]
    assert raised.value.field == field


# -- the similarity-gated contradiction check ---------------------------------------


def test_one_claim_with_two_values_is_flagged_for_review(store_target: Target) -> None:
    target = store_target("slots")
    with Memory(target, agent_id="a") as mem:
        paris = mem.write("Paris is the capital of France").id or ""
        lyon = mem.write("Lyon is the capital of France").id or ""
        mem.write("Berlin is the capital of Germany")  # another subject
        mem.write("The capital of France is Paris, as everyone knows")  # a paraphrase
        mem.write("Paris is the capital of france")  # the same claim
        mem.write("Alice likes green tea every morning")  # no copula: many values hold
        mem.write("Alice likes black tea every morning")
        mem.write("The meeting room is booked by the sales team")
        mem.write("The meeting rooms are booked by the sales team")  # folded alike
        slots = [f for f in mem.contradictions() if f.kind == "slot"]
        assert [frozenset((f.first, f.second)) for f in slots] == [frozenset((paris, lyon))]
        assert "'lyon' vs 'pari'" in slots[0].detail
        assert {s for _, s in rows(target).values()} == {"active"}  # flagged, never resolved
