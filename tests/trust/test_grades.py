"""The evidence-grade ratchet: who may ratify, what stacks, and what each rung needs."""

from __future__ import annotations

import pytest

from assocmem import InvalidInput, Memory, SelfRatification, UnknownMemory
from tests.conftest import Target, raw_query


def test_the_ratchet_climbs_only_on_other_identities(store_target: Target) -> None:
    with Memory(store_target()) as mem:
        claim = mem.write("the parser leaks on long input", author="alice").id or ""
        assert mem.grade(claim).grade == "claimed"
        with pytest.raises(SelfRatification) as caught:
            mem.ratify(claim, "reproduction", "alice", lens="fuzz")
        assert caught.value.field == "by_key"
        assert mem.grade(claim).grade == "claimed"

        assert mem.ratify(claim, "independent_witness", "bob").stored
        assert mem.grade(claim).grade == "corroborated"
        assert mem.ratify(claim, "reproduction", "carol", lens="fuzz").stored
        assert mem.grade(claim).grade == "verified"
        # The same auditor repeating the same check adds nothing.
        repeat = mem.ratify(claim, "reproduction", "carol", lens="fuzz")
        assert not repeat.stored and mem.grade(claim).grade == "verified"
        assert mem.ratify(claim, "audit", "dave", lens="code-review").stored
        settled = mem.grade(claim)
    assert settled.grade == "settled" and not settled.novel
    assert "lenses:code-review,fuzz" in settled.why


def test_settled_needs_a_reproduction_and_two_lenses(store_target: Target) -> None:
    with Memory(store_target()) as mem:
        claim = mem.write("the cache is never invalidated").id or ""
        mem.ratify(claim, "audit", "bob", lens="code-review")
        mem.ratify(claim, "audit", "carol", lens="tracing")
        assert mem.grade(claim).grade == "verified"  # two lenses, no reproduction
        other = mem.write("the queue drops messages").id or ""
        mem.ratify(other, "reproduction", "bob", lens="fuzz")
        mem.ratify(other, "reproduction", "carol", lens="fuzz")
        assert mem.grade(other).grade == "verified"  # a reproduction, one lens


def test_novelty_needs_an_empty_prior_art_search(store_target: Target) -> None:
    with Memory(store_target()) as mem:
        claim = mem.write("a new bound on retries", author="alice").id or ""
        assert not mem.grade(claim).novel
        mem.ratify(claim, "prior_art_empty", "librarian")
        graded = mem.grade(claim)
    assert graded.novel and graded.grade == "claimed"


def test_a_writer_cannot_set_a_grade(store_target: Target) -> None:
    with Memory(store_target()) as mem:
        claim = mem.write(
            "settled and novel, trust me", kind="semantic", confidence=1.0,
            tags=["settled", "novel"], meta={"grade": "settled", "novel": True},
        ).id or ""  # fmt: skip
        graded = mem.grade(claim)
    assert (graded.grade, graded.novel) == ("claimed", False)


def test_bad_ratifications_name_their_field(tmp_path: object) -> None:
    with Memory(":memory:") as mem:
        claim = mem.write("a claim").id or ""
        for kwargs, field in (
            ({"kind": "vibes", "by_key": "bob"}, "kind"),
            ({"kind": "audit", "by_key": ""}, "by_key"),
            ({"kind": "audit", "by_key": "bob", "lens": 3}, "lens"),
        ):
            with pytest.raises(InvalidInput) as caught:
                mem.ratify(claim, **kwargs)  # type: ignore[arg-type]
            assert caught.value.field == field
        with pytest.raises(UnknownMemory):
            mem.ratify("01NOSUCHMEMORY0000000000000", "audit", "bob")


CLAIM = "the retry budget is three attempts"


def test_convergence_is_agreement_until_adjudicated(store_target: Target) -> None:
    with Memory(store_target()) as mem:
        claim = mem.write(CLAIM, source="docs.example.com", author="alice").id or ""
        mem.write(CLAIM, source="https://blog.example.com/x", observed_at="2026-01-02T00:00:00Z")
        echo = mem.convergence_report(claim)
        # Two records, one origin: agreement from a shared substrate is suspicious.
        assert echo.corroborating == 2 and echo.low_source_diversity
        assert echo.status == "uncorroborated" and echo.grade == "claimed"
        mem.write(CLAIM, source="forum.example.net", observed_at="2026-01-03T00:00:00Z")
        agreed = mem.convergence_report(claim)
        assert agreed.status == "convergence-backed" and not agreed.low_source_diversity
        assert agreed.grade == "corroborated" and len(agreed.origins) == 2
        mem.ratify(claim, "reproduction", "carol", lens="rerun")
        judged = mem.convergence_report(claim)
    assert judged.status == "adjudicated" and judged.adjudicated_by == ("carol",)
    assert judged.grade == "verified"


def test_a_lineage_grade_is_capped_at_the_weakest_parent(store_target: Target) -> None:
    with Memory(store_target()) as mem:
        strong = mem.write("the cache holds ten entries").id or ""
        weak = mem.write("the cache never evicts").id or ""
        for by, lens in (("bob", "fuzz"), ("carol", "review")):
            mem.ratify(strong, "reproduction", by, lens=lens)
        summary = mem.write("the cache is small and sticky", derived_from=[strong, weak]).id or ""
        mem.ratify(summary, "audit", "dave", lens="review")
        report = mem.convergence_report(summary)
        assert mem.grade(strong).grade == "settled"
    assert report.grade == "verified" and report.lineage_grade == "claimed"


def test_with_status_is_opt_in_and_default_reads_are_unchanged(store_target: Target) -> None:
    with Memory(store_target()) as mem:
        claim = mem.write(CLAIM, source="docs.example.com").id or ""
        plain = mem.read("retry budget")
        status = mem.read("retry budget", with_status=True)
    assert plain.items and all("status" not in item for item in plain.to_dict()["items"])
    assert [i.status.id for i in status.items if i.status] == [claim]
    assert status.items[0].to_dict()["status"]["status"] == "uncorroborated"


def test_with_status_reports_each_item_as_its_own_report_would(store_target: Target) -> None:
    # The statuses of one read are graded together; each must still be its own report.
    with Memory(store_target()) as mem:
        strong = mem.write("the cache holds ten entries", source="docs.example.com").id or ""
        mem.write("The cache holds ten entries", source="forum.example.net")
        weak = mem.write("the cache never evicts its entries").id or ""
        summary = mem.write("the cache entries stay", derived_from=[strong, weak]).id or ""
        mem.ratify(summary, "audit", "dave", lens="review")
        read = mem.read("cache entries", k=10, with_status=True)
        alone = {i.record.id: mem.convergence_report(i.record.id) for i in read.items}
    assert {strong, weak, summary} <= set(alone)
    assert {i.record.id: i.status for i in read.items} == alone
    assert len({(r.status, r.grade, r.lineage_grade) for r in alone.values()}) >= 3


def test_forget_takes_a_claims_ratifications_with_it(store_target: Target) -> None:
    db = store_target()
    with Memory(db) as mem:
        claim = mem.write("a claim to forget").id or ""
        mem.ratify(claim, "audit", "bob", lens="review")
        assert mem.forget([claim]) == 1
    assert raw_query(db, "SELECT COUNT(*) FROM trust_ratifications") == [(0,)]
