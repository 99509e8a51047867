"""The evidence-grade ratchet: who may ratify, what stacks, and what each rung needs."""

from __future__ import annotations

import pytest

from assocmem import InvalidInput, Memory, SelfRatification, UnknownMemory
from tests.conftest import Target


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
