"""Kinds, access before similarity, expiry, archive, supersession, contradictions,
forgetting and retention (SPEC C1, C5)."""

from __future__ import annotations

import multiprocessing
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from assocmem import InvalidInput, Memory, UnknownEntity, UnknownMemory
from assocmem.lifecycle.retention import EXAMPLE_POLICY
from assocmem.testing import ToyEmbedder
from assocmem.text.sources import canonical_source
from assocmem.vectors.embedders import register_embedder, unregister_embedder
from tests.conftest import Target, raw_query


@pytest.fixture(autouse=True)
def toy() -> Iterator[None]:
    register_embedder("toy", ToyEmbedder)
    yield
    unregister_embedder("toy")


def at(days: float) -> str:
    return (datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=days)).isoformat()


# -- kinds and working memory ------------------------------------------------------


def test_working_memory_belongs_to_its_task(store_target: Target) -> None:
    with Memory(store_target("w"), agent_id="a") as mem:
        mem.write("goal: remove item 7 using store v2", kind="working", task="t1")
        mem.write("goal: rotate the keys", kind="working", task="t2")
        mem.write("store v2 takes object arguments", kind="semantic")
        assert {i.record.kind for i in mem.read("store goal remove").items} == {"semantic"}
        in_task = {i.text for i in mem.read("goal remove item", task="t1").items}
        assert "goal: remove item 7 using store v2" in in_task
        assert "goal: rotate the keys" not in in_task
        assert len(mem.read("goal", kinds=["working"]).items) == 2
        assert mem.end_task("t1") == 1
        assert mem.read("goal remove item", task="t1", kinds=["working"]).items == ()
        with pytest.raises(InvalidInput):
            mem.write("no task given", kind="working")
        with pytest.raises(InvalidInput):
            mem.write("a task on a fact", kind="semantic", task="t1")


# -- provenance --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "canonical"),
    [
        # a domain is its registrable domain by the Public Suffix List; a name
        # meets it in `distinct_origins` (tests/trust/test_sources.py).
        ("https://en.wikipedia.org/wiki/Python", "wikipedia.org"),
        ("wikipedia.org", "wikipedia.org"),
        ("Wikipedia", "wikipedia"),
        ("http://www.bbc.co.uk/news", "bbc.co.uk"),
        ("  The  Runbook ", "the runbook"),
    ],
)
def test_variants_of_one_origin_compare_equal(source: str, canonical: str) -> None:
    assert canonical_source(source) == canonical


def test_provenance_is_stored_and_filterable(store_target: Target) -> None:
    with Memory(store_target("p"), agent_id="a") as mem:
        mem.write("fact one", source="https://en.wikipedia.org/wiki/X", kind="semantic")
        mem.write("fact two", source="wikipedia.org", kind="semantic")
        mem.write("fact three", source="a blog", kind="semantic")
        found = mem.read("fact", where={"source_canonical": "wikipedia.org"}).items
        assert {i.text for i in found} == {"fact one", "fact two"}
        assert found[0].record.source_canonical == "wikipedia.org"


# -- access before similarity ------------------------------------------------------

SECRET = "How do I reset the production database password quickly?"


def _restricted_world(path: str) -> dict[str, str]:
    with Memory(path, agent_id="ops", embedder="toy", role="admin") as admin:
        public = admin.write(
            "Reset a staging database password from the console.", concepts=["reset", "password"]
        )
        secret = admin.write(
            SECRET, concepts=["reset", "password", "production"], access=["admin"], kind="semantic",
            source="runbook", verified_at=at(0), meta={"key": [1.0], "value": [1.0]},
            associations={
                "entities": ["ProdDB"], "relations": [
                    {"subject": "ProdDB", "predicate": "guarded by", "object": "Vault"}]},
        )  # fmt: skip
        for _ in range(3):
            admin.feedback([secret.id or ""], 1.0, query_concepts=["credential"])
        return {"public": public.id or "", "secret": secret.id or ""}


@pytest.mark.parametrize("role", [None, "student"])
def test_a_restricted_record_never_surfaces_nor_counts(
    store_target: Target, role: str | None
) -> None:
    path = store_target("access")
    ids = _restricted_world(path)
    with Memory(path, agent_id="ops", embedder="toy", role=role) as mem:
        for mode in ("recall", "evidence"):
            result = mem.read(SECRET, mode=mode, as_of=at(1))
            assert ids["secret"] not in {i.id for i in result.items}
            assert ids["secret"] not in str(result.gates)
        assert mem.read(concepts=["production"]).items == ()
        assert mem.read(concepts=["credential"], hops=3, threshold=1).items == ()
        assert all("production" not in (e.source, e.target) for e in mem.graph(["password"]).edges)
        assert mem.graph(["credential"]).edges == ()
        with pytest.raises(UnknownEntity):
            mem.traverse("ProdDB")
        with pytest.raises(UnknownMemory):
            mem.get([ids["secret"]])
        with pytest.raises(UnknownMemory):
            mem.feedback([ids["secret"]], 1.0, query_concepts=["x"])
        assert all(ids["secret"] not in str(i) for i in mem.reconstruct(SECRET).items)
        assert mem.stats().memories == 1
        assert [r.id for r in mem.export()] == [ids["public"]]
        assert mem.soft_read([1.0]).weights == ()
    with Memory(path, agent_id="ops", embedder="toy", role="admin") as admin:
        assert admin.read(SECRET).items[0].id == ids["secret"]
        assert [w[0] for w in admin.soft_read([1.0]).weights] == [ids["secret"]]
        assert admin.traverse("ProdDB").entities
        assert admin.stats().memories == 2


def test_read_can_switch_role_per_call(store_target: Target) -> None:
    path = store_target("role")
    ids = _restricted_world(path)
    with Memory(path, agent_id="ops") as mem:
        assert mem.read(SECRET, role="admin").items[0].id == ids["secret"]
        assert ids["secret"] not in {i.id for i in mem.read(SECRET).items}
        with pytest.raises(InvalidInput):
            mem.read(SECRET, role="a\nb")


# -- expiry, archive, restore, protect ----------------------------------------------


def test_expiry_marks_and_only_the_evidence_gate_excludes(store_target: Target) -> None:
    with Memory(store_target("e"), agent_id="a") as mem:
        fact = mem.write("the API limit is 100 calls", kind="semantic", source="docs",
                         verified_at=at(0), recheck_by=at(7))  # fmt: skip
        before = mem.read("API limit", as_of=at(3)).items[0]
        after = mem.read("API limit", as_of=at(8)).items[0]
        assert before.id == after.id == fact.id
        assert not before.expired and after.expired
        assert mem.read("API limit", mode="evidence", as_of=at(8)).items == ()
        assert mem.read("API limit", mode="evidence", as_of=at(8)).gates == {"expired": [fact.id]}


def test_archive_restore_and_protection(store_target: Target) -> None:
    with Memory(store_target("a"), agent_id="a") as mem:
        keep = mem.write("protected runbook step", protected=True)
        old = mem.write("old runbook step", meta={"team": "x"})
        result = mem.archive([keep.id or "", old.id or ""])
        assert result.changed == (old.id,) and result.skipped == {keep.id: "protected"}
        assert {i.id for i in mem.read("runbook step").items} == {keep.id}
        assert mem.read("runbook step", where={"status": "archived"}).items == ()
        before = mem.get([keep.id or ""])
        assert mem.restore([old.id or ""]).changed == (old.id,)
        restored = mem.read("old runbook step").items[0].record
        assert restored.text == "old runbook step" and restored.meta == {"team": "x"}
        assert mem.get([keep.id or ""]) == before
        assert mem.archive(where={"meta.team": "x"}).changed == (old.id,)
        mem.protect([old.id or ""], protected=True)
        assert mem.restore([old.id or ""]).changed == (old.id,)
        assert mem.archive([old.id or ""]).skipped == {old.id: "protected"}


# -- supersession -------------------------------------------------------------------


def test_a_key_keeps_one_current_value_and_history(store_target: Target) -> None:
    with Memory(store_target("k"), agent_id="a") as mem:
        v1 = mem.write("region is eu-west-1", key=("app", "region"), observed_at=at(1))
        v2 = mem.write("region is us-east-2", key=("app", "region"), observed_at=at(5))
        old = mem.write("region is ap-south-1", key=("app", "region"), observed_at=at(3))
        assert v2.superseded == (v1.id,)
        assert old.stored and old.reason and old.reason.startswith("history")
        current = [i.text for i in mem.read("region", k=10).items]
        assert current == ["region is us-east-2"]
        everything = {i.text for i in mem.read("region", k=10, include_superseded=True).items}
        assert len(everything) == 3
        chain = mem.history(("app", "region"))
        assert [r.id for r in chain] == [v1.id, old.id, v2.id]
        assert [r.status for r in chain] == ["superseded", "superseded", "active"]
        assert mem.forget([v2.id or ""]) == 1
        assert [i.text for i in mem.read("region").items] == ["region is ap-south-1"]


def test_stale_value_rate_is_zero_over_a_back_filled_stream(store_target: Target) -> None:
    rng = random.Random(11)
    truth: dict[str, tuple[float, int]] = {}
    with Memory(store_target("stream"), agent_id="a") as mem:
        for step in range(1000):
            subject = f"svc{rng.randrange(40)}"
            observed = rng.uniform(0, 100)  # often older than the current value: back-filled
            mem.write(
                f"{subject} version {step}", key=(subject, "version"), observed_at=at(observed)
            )
            if subject not in truth or observed >= truth[subject][0]:
                truth[subject] = (observed, step)
        stale = 0
        for subject, (_, step) in truth.items():
            active = [r for r in mem.history((subject, "version")) if r.status == "active"]
            served = mem.read(f"{subject} version", where={"key_subject": subject}, k=50).items
            if [r.text for r in active] != [f"{subject} version {step}"]:
                stale += 1
            if [i.text for i in served] != [f"{subject} version {step}"]:
                stale += 1
        assert stale == 0


def _keyed_writer(path: str, worker: int, barrier: Any) -> None:
    rng = random.Random(worker)
    with Memory(path, agent_id="a") as mem:
        barrier.wait()
        for i in range(100):
            mem.write(f"w{worker} value {i}", key=("shared", f"k{i % 5}"),
                      observed_at=at(rng.uniform(0, 10)))  # fmt: skip


@pytest.mark.slow
def test_concurrent_writers_leave_exactly_one_active_value(store_target: Target) -> None:
    path = store_target("race")
    Memory(path, agent_id="a").close()
    context = multiprocessing.get_context("spawn")
    barrier = context.Manager().Barrier(4)
    with context.Pool(4) as pool:
        for job in [pool.apply_async(_keyed_writer, (path, w, barrier)) for w in range(4)]:
            job.get(timeout=300)
    with Memory(path, agent_id="a") as mem:
        for k in range(5):
            chain = mem.history(("shared", f"k{k}"))
            assert len(chain) == 80
            active = [r for r in chain if r.status == "active"]
            assert len(active) == 1
            assert active[0].observed_at == max(r.observed_at for r in chain)


# -- contradictions ------------------------------------------------------------------


def test_contradictions_are_flagged_never_resolved(store_target: Target) -> None:
    with Memory(store_target("c"), agent_id="a") as mem:
        a = mem.write(
            "the cache is enabled in production", key=("cache", "state"), observed_at=at(1)
        )
        b = mem.write(
            "the cache is disabled in production", key=("cache", "state"), observed_at=at(2)
        )
        c = mem.write("The deploy script restarts the worker pool after migration")
        d = mem.write("The deploy script never restarts the worker pool after migration")
        flags = mem.contradictions()
        kinds = {(f.kind, frozenset((f.first, f.second))) for f in flags}
        assert ("key", frozenset((a.id, b.id))) in kinds
        assert ("polarity", frozenset((c.id, d.id))) in kinds
        assert mem.stats().memories == 4
        assert mem.get([c.id or "", d.id or ""])[0].text.startswith("The deploy")


# -- forgetting ------------------------------------------------------------------------

TOKEN = "qorvexium"


def test_forget_leaves_no_trace_in_any_arm(store_target: Target) -> None:
    path = store_target("forget")
    with Memory(path, agent_id="a", embedder="toy") as mem:
        mem.write("timeouts on the api gateway", concepts=["timeout", "gateway"])
        mem.write("gateway retries fixed it", concepts=["gateway", "retry"])
        doomed = mem.write(
            f"{TOKEN} credentials leaked in the gateway log", concepts=["gateway", TOKEN],
            key=("gateway", "incident"), meta={"key": [1.0], "value": [1.0]},
            associations={"entities": ["Gateway"], "relations": [
                {"subject": "Gateway", "predicate": "logged", "object": "Gateway Log"}]},
        )  # fmt: skip
        for _ in range(3):
            mem.feedback([doomed.id or ""], 1.0, query_concepts=["timeout"])
        assert mem.forget(where={"key_subject": "gateway"}) == 1
        reads = [
            mem.read(TOKEN, k=50), mem.read(f"{TOKEN} credentials leaked in the gateway log"),
            mem.read(concepts=[TOKEN]), mem.read(concepts=["timeout"], hops=3, threshold=0.5),
            mem.read("leaked credentials", include_superseded=True, kinds=["episodic"]),
        ]  # fmt: skip
        for result in reads:
            assert all(TOKEN not in i.text for i in result.items)
            assert TOKEN not in result.expanded_concepts
        for concept in ("timeout", "gateway"):
            assert all(TOKEN not in (e.source, e.target) for e in mem.graph([concept], 3).edges)
        assert mem.graph([TOKEN]).edges == ()
        assert all(TOKEN not in str(i) for i in mem.reconstruct(f"{TOKEN} gateway").items)
        assert TOKEN not in str(mem.traverse("Gateway", max_hops=3))
        assert all(TOKEN not in r.text for r in mem.export())
        assert mem.soft_read([1.0]).weights == ()
        assert mem.history(("gateway", "incident")) == []
        with pytest.raises(UnknownMemory):
            mem.get([doomed.id or ""])
    assert raw_query(path, f"SELECT COUNT(*) FROM memories WHERE text LIKE '%{TOKEN}%'") == [(0,)]
    assert raw_query(path, "SELECT COUNT(*) FROM feedback_items") == [(0,)]
    if path.startswith("postgresql://"):
        fts = f"SELECT COUNT(*) FROM memories WHERE fts @@ to_tsquery('english', '{TOKEN}')"
    else:
        fts = f"SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH '{TOKEN}'"
    assert raw_query(path, fts) == [(0,)]
    assert raw_query(path, "SELECT COUNT(*) FROM relations WHERE anchor_seq != 0") == [(0,)]


def test_forget_needs_ids_or_where(store_target: Target) -> None:
    with Memory(store_target("f"), agent_id="a") as mem:
        with pytest.raises(InvalidInput):
            mem.forget()
        with pytest.raises(InvalidInput):
            mem.forget(ids=["x"], where={"kind": "semantic"})


# -- retention -----------------------------------------------------------------------


def test_the_example_retention_policy_is_data(store_target: Target) -> None:
    with Memory(store_target("r"), agent_id="a") as mem:
        fact = mem.write("v2 remove takes an object", kind="semantic", source="docs",
                         version="2", verified_at=at(0), verification_scope="schema")  # fmt: skip
        hypothesis = mem.write("maybe v3 drops remove", kind="semantic")
        failed = mem.write("remove(7) failed: TypeError", tags=["failed-call"])
        for outcome in ("success", "success", "failure"):
            mem.write(f"wrapped the id in an object: {outcome}", tags=["workflow"],
                      meta={"workflow": "wrap-id", "outcome": outcome})  # fmt: skip
        report = {r["name"]: r for r in mem.retain(EXAMPLE_POLICY)}
        facts = report["new fact"]
        assert facts["matched"] == 2 and facts["incomplete"]["source"] == [hypothesis.id]
        assert set(facts["recheck_set"]) == {fact.id, hypothesis.id}
        assert mem.get([fact.id or ""])[0].recheck_by == "2024-01-08T00:00:00.000000Z"
        assert report["failed call"]["incomplete"] == {"version": [failed.id]}
        assert mem.get([failed.id or ""])[0].protected is True
        (proposal,) = report["repeated workflow"]["proposals"]
        assert proposal["workflow"] == "wrap-id" and len(proposal["supporting"]) == 2
        assert len(proposal["counterexamples"]) == 1
        assert mem.stats().by_kind.get("procedural") is None  # proposed, never promoted
        with pytest.raises(InvalidInput):
            mem.retain({"rules": [{"match": {"kind": "semantic"}, "delete_everything": True}]})


def test_retain_applies_no_policy_it_was_not_given(store_target: Target) -> None:
    """There is no default policy: a call without one is refused, naming what a policy
    holds, and no memory is protected, archived or given a recheck date."""
    with Memory(store_target("r"), agent_id="a") as mem:
        fact = mem.write("v2 remove takes an object", kind="semantic")
        failed = mem.write("remove(7) failed: TypeError", tags=["failed-call"])
        ids = [fact.id or "", failed.id or ""]
        before = mem.get(ids)
        with pytest.raises(TypeError):
            mem.retain()  # type: ignore[call-arg]
        for policy in (None, {}, {"rules": []}):
            with pytest.raises(InvalidInput) as refused:
                mem.retain(policy)  # type: ignore[arg-type]
            assert refused.value.field == "policy" and "'match'" in refused.value.message
        assert mem.get(ids) == before
        assert [(r.protected, r.recheck_by, r.status) for r in before] == [
            (False, None, "active")
        ] * 2
