"""The associative core through the public API, on real SQLite stores."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from assocmem import (
    EmptyText,
    InvalidConcept,
    InvalidInput,
    InvalidOutcome,
    InvalidTime,
    Memory,
    TextTooLong,
    UnknownMemory,
)
from assocmem.links.hebbian import MAX_EXPANSION_PER_HOP
from assocmem.write.validate import MAX_TEXT_BYTES
from tests.conftest import raw_query, write_seed


def test_seed_story_in_one_process(mem: Memory) -> None:
    ids = write_seed(mem)
    before = mem.read(concepts=["timeout"])
    assert before.query_concepts == ("timeout",)
    assert before.expanded_concepts == {"retry": 2}
    backoff = next(i for i in before.items if i.text.startswith("Backoff"))
    assert backoff.source == "hebbian_retrieval"
    assert [(v.concept, v.weight, v.path) for v in backoff.via] == [
        ("retry", 2.0, ("timeout", "retry"))
    ]
    direct = [i for i in before.items if i.source == "concept_scoped"]
    assert {i.text for i in direct} == {
        "The deploy timed out after the release.",
        "Retried the request and it went through.",
        "Timed out again, retried, fine.",
    }
    for _ in range(2):
        mem.feedback([backoff.id], outcome=1.0, query_concepts=before.query_concepts)
    after = mem.read(concepts=["timeout"])
    assert after.expanded_concepts == {"backoff": 2, "retry": 4}
    jitter = next(i for i in after.items if i.text.startswith("Jitter"))
    assert jitter.id == ids["Jitter on the backoff spread the calls out."]
    assert [v.concept for v in jitter.via] == ["backoff"]
    assert all(not i.text.startswith("Cache") for i in after.items)


def test_direct_matches_rank_above_associative_ones(mem: Memory) -> None:
    write_seed(mem)
    sources = [i.source for i in mem.read(concepts=["timeout"]).items]
    assert sources == ["concept_scoped"] * 3 + ["hebbian_retrieval"]


def test_read_by_question_extracts_concepts(mem: Memory) -> None:
    write_seed(mem)
    result = mem.read("Why did the deploys fail?")
    assert "deploy" in result.query_concepts
    assert result.items[0].text in {
        "The deploy timed out after the release.",
        "Cache warmed before the deploy.",
    }


def test_concept_only_read_runs_only_concept_arms(mem: Memory) -> None:
    write_seed(mem)
    arms = mem.read(concepts=["timeout"]).arms
    assert {arm for arm, ran in arms.items() if ran} == {
        "concept_scoped", "learned", "hebbian_retrieval"
    }  # fmt: skip
    assert arms["semantic"] is False and arms["lexical"] is False


def test_order_is_deterministic_with_ties_broken_by_id(mem: Memory) -> None:
    mem.write_many([{"text": f"note {i}", "concepts": ["shared"]} for i in range(5)])
    first = mem.read(concepts=["shared"])
    assert [i.id for i in first.items] == [i.id for i in mem.read(concepts=["shared"]).items]
    keys = [(-i.score, i.id) for i in first.items]
    assert keys == sorted(keys)


def test_write_returns_result_and_keeps_every_c1_field(db_path: str) -> None:
    mem = Memory(db_path, agent_id="ops")
    maintainer = Memory(db_path, agent_id="ops", role="maintainer")
    result = mem.write(
        "Store v2 takes an object argument.",
        concepts=["Store", "Arguments"],
        kind="semantic",
        tags=["api", "v2"],
        value=3,
        meta={"page": 4, "nested": {"ok": True}},
        source="https://docs.example.com/store",
        observed_at="2024-05-01T12:00:00+02:00",
        version="2.0",
        verified_at="2024-05-01T12:00:00Z",
        verification_scope="schema",
        recheck_by="2024-05-08T00:00:00Z",
        confidence=0.9,
        access=["maintainer"],
        key=("store", "argument-type"),
        protected=True,
    )
    assert result.stored and result.reason is None
    assert result.concepts == ("store", "argument")
    assert mem.read(concepts=["store"]).items == ()  # restricted: not for a reader without role
    mem.close()
    mem = maintainer
    child = mem.write("Summary of the store note.", derived_from=[result.id])
    (record,) = mem.get([result.id])
    assert record.concepts == ("store", "argument")
    assert record.concept_forms == ("Store", "Arguments")
    assert record.kind == "semantic" and record.tags == ("api", "v2") and record.value == 3.0
    assert record.meta == {"page": 4, "nested": {"ok": True}}
    assert record.observed_at == "2024-05-01T10:00:00.000000Z"
    assert record.version == "2.0" and record.confidence == 0.9
    assert record.verified_at == "2024-05-01T12:00:00.000000Z"
    assert record.recheck_by == "2024-05-08T00:00:00.000000Z"
    assert record.verification_scope == "schema" and record.access == ("maintainer",)
    assert record.key == ("store", "argument-type") and record.protected is True
    assert record.status == "active" and record.valence == 0.0
    assert mem.get([child.id])[0].derived_from == (result.id,)
    mem.close()


def test_retried_write_is_refused_as_duplicate(mem: Memory) -> None:
    first = mem.write("Disk full on db-2.", observed_at="2024-01-01T00:00:00Z")
    again = mem.write("Disk full on db-2.", observed_at="2024-01-01T00:00:00Z")
    later = mem.write("Disk full on db-2.", observed_at="2024-01-02T00:00:00Z")
    assert first.stored and not again.stored
    assert again.reason == "duplicate" and again.id == first.id
    assert later.stored and later.id != first.id
    assert mem.stats().memories == 2
    assert mem.graph(["disk"]).edges[0].count == 2  # the refused write added no co-occurrence


def test_write_many_keeps_valid_items_and_reports_the_rest(mem: Memory) -> None:
    results = mem.write_many(
        [
            {"text": "good one", "concepts": ["a", "b"]},
            {"text": "   "},
            {"text": "bad concepts", "concepts": ["a", 3]},
            "not a dict",
            {"text": "good two", "concepts": ["a", "b"]},
            {"text": "unknown field", "colour": "red"},
        ]
    )
    assert [r.stored for r in results] == [True, False, False, False, True, False]
    assert [r.error for r in results] == [
        None, "EmptyText", "InvalidConcept", "InvalidInput", None, "InvalidInput",
    ]  # fmt: skip
    assert results[2].field == "concepts" and results[5].field == "colour"
    assert mem.graph(["a"]).edges[0].count == 2


@pytest.mark.parametrize(
    ("kwargs", "error", "field"),
    [
        ({"text": ""}, EmptyText, "text"),
        ({"text": " \n\t "}, EmptyText, "text"),
        ({"text": None}, InvalidInput, "text"),
        ({"text": "x" * (MAX_TEXT_BYTES + 1)}, TextTooLong, "text"),
        ({"text": "é" * (MAX_TEXT_BYTES // 2 + 1)}, TextTooLong, "text"),
        ({"text": "ok", "concepts": ["fine", 7]}, InvalidConcept, "concepts"),
        ({"text": "ok", "concepts": "timeout"}, InvalidConcept, "concepts"),
        ({"text": "ok", "concepts": [" "]}, InvalidConcept, "concepts"),
        ({"text": "ok", "concepts": [f"c{i}" for i in range(40)]}, InvalidConcept, "concepts"),
        ({"text": "ok", "kind": "dream"}, InvalidInput, "kind"),
        ({"text": "ok", "value": math.nan}, InvalidInput, "value"),
        ({"text": "ok", "value": -1}, InvalidInput, "value"),
        ({"text": "ok", "confidence": 1.5}, InvalidInput, "confidence"),
        ({"text": "ok", "meta": {"x": math.inf}}, InvalidInput, "meta"),
        ({"text": "ok", "meta": {"x": object()}}, InvalidInput, "meta"),
        ({"text": "ok", "meta": ["not", "a", "dict"]}, InvalidInput, "meta"),
        ({"text": "ok", "observed_at": "2024-05-01T12:00:00"}, InvalidTime, "observed_at"),
        ({"text": "ok", "observed_at": "yesterday"}, InvalidTime, "observed_at"),
        ({"text": "ok", "key": ("only-subject",)}, InvalidInput, "key"),
        ({"text": "ok", "derived_from": ["no-such-id"]}, UnknownMemory, None),
        ({"text": "ok", "tags": "single"}, InvalidInput, "tags"),
        ({"text": "ok", "protected": "yes"}, InvalidInput, "protected"),
    ],
)
def test_bad_writes_raise_typed_errors_and_store_nothing(
    mem: Memory, kwargs: dict[str, object], error: type[Exception], field: str | None
) -> None:
    kwargs = dict(kwargs)
    text = kwargs.pop("text")
    with pytest.raises(error) as caught:
        mem.write(text, **kwargs)  # type: ignore[arg-type]
    assert getattr(caught.value, "field", None) == field
    assert mem.stats().memories == 0 and mem.stats().links == 0


@pytest.mark.parametrize("outcome", [1.5, -1.01, math.nan, math.inf, "1", True, None])
def test_feedback_rejects_bad_outcomes(mem: Memory, outcome: object) -> None:
    ids = write_seed(mem)
    with pytest.raises(InvalidOutcome):
        mem.feedback(list(ids.values())[:1], outcome, query_concepts=["timeout"])  # type: ignore[arg-type]
    assert mem.stats().feedback == 0


def test_feedback_on_unknown_id_is_an_error_and_changes_nothing(mem: Memory) -> None:
    ids = write_seed(mem)
    known = ids["Backoff of two seconds fixed the flaky call."]
    with pytest.raises(UnknownMemory) as caught:
        mem.feedback([known, "01UNKNOWN"], 1.0, query_concepts=["timeout"])
    assert caught.value.record_id == "01UNKNOWN"
    assert mem.read(concepts=["timeout"]).expanded_concepts == {"retry": 2}
    assert mem.get([known])[0].valence == 0.0
    assert mem.stats().feedback == 0


def test_feedback_rejects_empty_and_non_string_ids(mem: Memory) -> None:
    for ids in ([], "single-id", [3]):
        with pytest.raises(InvalidInput):
            mem.feedback(ids, 1.0, query_concepts=["x"])  # type: ignore[arg-type]


def test_threshold_holds_and_can_be_lowered(mem: Memory) -> None:
    write_seed(mem)
    assert "deploy" not in mem.read(concepts=["timeout"]).expanded_concepts
    low = mem.read(concepts=["timeout"], threshold=1)
    assert low.expanded_concepts == {"retry": 2, "deploy": 1}
    assert any(i.text.startswith("Cache") for i in low.items)


def test_hops_reach_further_and_are_bounded(mem: Memory) -> None:
    write_seed(mem)
    mem.write("Backoff and retry again.", concepts=["retry", "backoff"])
    mem.write("Jitter and backoff again.", concepts=["backoff", "jitter"])
    one = mem.read(concepts=["timeout"])
    two = mem.read(concepts=["timeout"], hops=2)
    three = mem.read(concepts=["timeout"], hops=3)
    assert one.expanded_concepts == {"retry": 2}
    assert two.expanded_concepts == {"retry": 2, "backoff": 2}
    assert three.expanded_concepts == {"retry": 2, "backoff": 2, "jitter": 2}
    jitter = next(i for i in three.items if i.text == "Jitter and backoff again.")
    assert ("timeout", "retry", "backoff") in [v.path for v in jitter.via]
    assert mem.read(concepts=["timeout"], hops=0).expanded_concepts == {}
    for hops in (-1, 4, 1.5):
        with pytest.raises(InvalidInput):
            mem.read(concepts=["timeout"], hops=hops)  # type: ignore[arg-type]


def test_fan_out_is_bounded_and_the_cut_is_reported(mem: Memory) -> None:
    mem.write_many(
        [
            {"text": f"hub note {i}", "concepts": ["hub", f"spoke{i}"]}
            for i in range(60)
            for _ in (0,)
        ]
        + [{"text": f"hub again {i}", "concepts": ["hub", f"spoke{i}"]} for i in range(60)]
    )
    result = mem.read(concepts=["hub"], k=200)
    assert len(result.expanded_concepts) == MAX_EXPANSION_PER_HOP
    assert result.bounds["expansion_capped"] == 1
    assert 1 <= result.bounds["expanded_concepts_cut"] <= 60 - MAX_EXPANSION_PER_HOP
    assert mem.read(concepts=["spoke1"]).bounds == {
        "expansion_capped": 0,
        "expanded_concepts_cut": 0,
    }


def test_weights_never_drop_below_zero(mem: Memory) -> None:
    ids = write_seed(mem)
    backoff = ids["Backoff of two seconds fixed the flaky call."]
    for _ in range(5):
        mem.feedback([backoff], -1.0, query_concepts=["timeout"])
    edges = {(e.source, e.target): e for e in mem.graph(["timeout"]).edges}
    assert edges[("timeout", "retry")].weight == 0.0
    assert edges[("timeout", "backoff")].weight == 0.0
    assert edges[("timeout", "retry")].count == 2  # co-occurrence is history, not moved
    assert edges[("timeout", "retry")].valence == -1.0
    mem.feedback([backoff], 1.0, query_concepts=["timeout"])
    edges = {(e.source, e.target): e for e in mem.graph(["timeout"]).edges}
    assert edges[("timeout", "retry")].weight == 1.0
    assert edges[("timeout", "retry")].valence == pytest.approx(-4 / 6)


def test_feedback_moves_valence_and_logs(mem: Memory) -> None:
    ids = write_seed(mem)
    backoff = ids["Backoff of two seconds fixed the flaky call."]
    first = mem.feedback([backoff], 1.0, query_concepts=["Timeouts"])
    assert first.links_updated == 2 and first.memories_updated == 1
    assert mem.get([backoff])[0].valence == 0.5
    mem.feedback([backoff], 1.0, query_concepts=["timeout"])
    assert mem.get([backoff])[0].valence == 0.75
    assert mem.stats().feedback == 2


def test_feedback_log_is_append_only(db_path: str) -> None:
    with Memory(db_path, agent_id="ops") as mem:
        ids = write_seed(mem)
        mem.feedback([next(iter(ids.values()))], 0.5, query_concepts=["timeout"])
    (row,) = raw_query(
        db_path,
        "SELECT s.agent_id, f.query_concepts, f.outcome, COUNT(i.memory_seq)"
        " FROM feedback f JOIN scopes s ON s.id = f.scope_id"
        " JOIN feedback_items i ON i.feedback_id = f.id GROUP BY s.agent_id, f.id",
    )
    assert row[0] == "ops" and '"timeout"' in row[1] and row[2] == 0.5 and row[3] == 1
    with pytest.raises(Exception, match="append-only"):
        raw_query(db_path, "UPDATE feedback SET outcome = 1")
    assert raw_query(db_path, "SELECT outcome FROM feedback") == [(0.5,)]


def test_graph_lists_edges_with_their_state(mem: Memory) -> None:
    write_seed(mem)
    edges = mem.graph(["timeout"]).edges
    assert [(e.source, e.target, e.weight, e.count) for e in edges] == [
        ("timeout", "retry", 2.0, 2),
        ("timeout", "deploy", 1.0, 1),
    ]
    assert all(e.valence == 0.0 and e.updated_at.endswith("Z") for e in edges)
    deeper = {(e.source, e.target) for e in mem.graph(["timeout"], depth=2).edges}
    assert {("retry", "backoff"), ("deploy", "cache")} <= deeper
    with pytest.raises(InvalidInput):
        mem.graph(["timeout"], depth=4)
    with pytest.raises(InvalidInput):
        mem.graph([])


def test_agents_never_see_each_other(db_path: str) -> None:
    with Memory(db_path, agent_id="alice") as alice, Memory(db_path, agent_id="bob") as bob:
        ids = write_seed(alice)
        secret = alice.write("alice secret token zebra", concepts=["zebra", "timeout"])
        assert bob.read(concepts=["timeout"]).items == ()
        assert bob.read(concepts=["timeout"]).expanded_concepts == {}
        assert bob.read("zebra secret").items == ()
        assert bob.graph(["timeout"]).edges == ()
        assert bob.stats().memories == 0 and bob.stats().links == 0
        with pytest.raises(UnknownMemory):
            bob.get([secret.id])
        with pytest.raises(UnknownMemory):
            bob.feedback([secret.id], 1.0, query_concepts=["timeout"])
        with pytest.raises(UnknownMemory):
            bob.write("mine", derived_from=[secret.id])
        write_seed(bob)  # the same notes in bob's memory are bob's own
        bob_backoff = next(i for i in bob.read(concepts=["timeout"]).items if i.via)
        for _ in range(3):
            bob.feedback([bob_backoff.id], 1.0, query_concepts=["timeout"])
        assert bob.read(concepts=["timeout"]).expanded_concepts == {"retry": 5, "backoff": 3}
        assert alice.read(concepts=["timeout"]).expanded_concepts == {"retry": 2}
        assert [r.valence for r in alice.get(list(ids.values()))] == [0.0] * 6


def test_projects_see_the_global_pool_but_not_each_other(db_path: str) -> None:
    with (
        Memory(db_path, agent_id="ops") as pool,
        Memory(db_path, agent_id="ops", project_id="alpha") as alpha,
        Memory(db_path, agent_id="ops", project_id="beta") as beta,
    ):
        shared = pool.write("shared runbook for timeouts", concepts=["timeout", "runbook"])
        only_alpha = alpha.write("alpha timeout incident", concepts=["timeout", "incident"])
        assert {i.id for i in alpha.read(concepts=["timeout"]).items} == {shared.id, only_alpha.id}
        assert {i.id for i in beta.read(concepts=["timeout"]).items} == {shared.id}
        assert {i.id for i in pool.read(concepts=["timeout"]).items} == {shared.id}
        with pytest.raises(UnknownMemory):
            beta.feedback([only_alpha.id], 1.0, query_concepts=["timeout"])
        assert {e.target for e in beta.graph(["timeout"]).edges} == {"runbook"}


def test_channels_see_the_shared_channel_but_not_each_other(db_path: str) -> None:
    with (
        Memory(db_path, agent_id="ops") as shared,
        Memory(db_path, agent_id="ops", channel="slack") as slack,
        Memory(db_path, agent_id="ops", channel="email") as email,
    ):
        common = shared.write("common note on timeouts", concepts=["timeout"])
        private = slack.write("slack note on timeouts", concepts=["timeout"])
        assert {i.id for i in slack.read(concepts=["timeout"]).items} == {common.id, private.id}
        assert {i.id for i in email.read(concepts=["timeout"]).items} == {common.id}


def test_negative_feedback_in_a_project_lowers_only_its_own_view(db_path: str) -> None:
    with (
        Memory(db_path, agent_id="ops") as pool,
        Memory(db_path, agent_id="ops", project_id="alpha") as alpha,
    ):
        ids = write_seed(pool)
        backoff = ids["Backoff of two seconds fixed the flaky call."]
        alpha.feedback([backoff], -1.0, query_concepts=["timeout"])
        assert alpha.read(concepts=["timeout"]).expanded_concepts == {}
        assert pool.read(concepts=["timeout"]).expanded_concepts == {"retry": 2}
        for _ in range(3):
            alpha.feedback([backoff], -1.0, query_concepts=["timeout"])
        alpha.feedback([backoff], 1.0, query_concepts=["timeout"])
        weights = {e.target: e.weight for e in alpha.graph(["timeout"]).edges}
        assert weights["retry"] == 1.0  # floored at 0 in alpha's view, then +1


def test_learned_links_survive_reopening(db_path: str) -> None:
    with Memory(db_path, agent_id="ops") as mem:
        ids = write_seed(mem)
        for _ in range(2):
            mem.feedback([ids["Backoff of two seconds fixed the flaky call."]], 1.0, ["timeout"])
    with Memory(db_path, agent_id="ops") as mem:
        assert mem.read(concepts=["timeout"]).expanded_concepts == {"backoff": 2, "retry": 4}


def test_bad_read_arguments(mem: Memory) -> None:
    for kwargs in (
        {},
        {"query": ""},
        {"query": 5},
        {"concepts": ["x"], "k": 0},
        {"concepts": ["x"], "threshold": 0},
        {"concepts": ["x"], "threshold": math.nan},
    ):
        with pytest.raises(InvalidInput):
            mem.read(**kwargs)  # type: ignore[arg-type]


def test_export_lists_records_oldest_first(mem: Memory) -> None:
    ids = write_seed(mem)
    assert [r.id for r in mem.export()] == list(ids.values())


def test_bad_scope_arguments(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        Memory(str(tmp_path / "x.db"), agent_id="")


def test_forget_removes_the_memory_and_what_its_write_added(db_path: str) -> None:
    with Memory(db_path, agent_id="ops") as mem:
        ids = write_seed(mem)
        secret = mem.write("zanzibarquux token in the runbook", concepts=["timeout", "zanzibar"])
        mem.feedback([ids["Backoff of two seconds fixed the flaky call."]], 1.0, ["timeout"])
        assert mem.forget([secret.id or ""]) == 1
        assert mem.read("zanzibarquux token").items == ()
        assert mem.read(concepts=["zanzibar"]).items == ()
        assert all("zanzibar" not in (e.source, e.target) for e in mem.graph(["timeout"], 2).edges)
        edges = {(e.source, e.target): e for e in mem.graph(["timeout"]).edges}
        assert edges[("timeout", "backoff")].weight == 1.0  # feedback's lesson stays
        with pytest.raises(UnknownMemory):
            mem.forget([secret.id or ""])
        assert mem.stats().memories == 6
    if db_path.startswith("postgresql://"):
        fts = (
            "SELECT COUNT(*) FROM memories WHERE fts @@ plainto_tsquery('english', 'zanzibarquux')"
        )
    else:
        fts = "SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH 'zanzibarquux'"
    assert raw_query(db_path, fts) == [(0,)]
    assert raw_query(db_path, "SELECT COUNT(*) FROM memories WHERE text LIKE '%zanzibar%'") == [
        (0,)
    ]
