"""Seed 003's channel switch: ``read(mode="auto" | "lexical" | "semantic")`` on both
backends, with a real (toy) embedder attached."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from assocmem import InvalidInput, Memory
from tests.conftest import Target

pytest.importorskip("numpy")

from assocmem.testing import ToyEmbedder  # noqa: E402

NOTES = (
    "The deploy timed out while the registry was slow.",
    "Backoff of two seconds fixed the flaky call.",
    "Registry mirrors cut image pulls in half.",
    "The cafeteria serves soup on Mondays.",
    "A slow registry made every deploy wait.",
)
QUESTION = "why was the deploy slow"
AT = "2030-01-01T00:00:00Z"  # one moment for reads compared score by score


@pytest.fixture
def mem(store_target: Target) -> Iterator[Memory]:
    with Memory(store_target("channels"), agent_id="ops", embedder=ToyEmbedder()) as memory:
        memory.write_many([{"text": text} for text in NOTES])
        yield memory


def _found(result: object) -> list[tuple[str, float]]:
    return [(i.id, i.score) for i in result.items]  # type: ignore[attr-defined]


def test_auto_is_the_default_every_arm_fused(mem: Memory) -> None:
    auto, default = mem.read(QUESTION, mode="auto", as_of=AT), mem.read(QUESTION, as_of=AT)
    assert _found(auto) == _found(default) and auto.arms["semantic"] and auto.arms["lexical"]
    assert auto.mode == "auto" and default.mode == "recall"


def test_lexical_consults_no_embedder(mem: Memory, store_target: Target) -> None:
    model = mem._space.embedder if mem._space else None
    assert isinstance(model, ToyEmbedder)
    calls = len(model.calls)
    lexical = mem.read(QUESTION, mode="lexical", as_of=AT)
    assert len(model.calls) == calls  # the question was never embedded
    assert not lexical.arms["semantic"] and lexical.arms["lexical"] and lexical.mode == "lexical"
    with Memory(store_target("channels"), agent_id="ops") as bare:  # no embedder attached
        assert _found(lexical) == _found(bare.read(QUESTION, as_of=AT))


def test_semantic_is_the_embedders_nearest_alone(mem: Memory) -> None:
    semantic = mem.read(QUESTION, mode="semantic", k=3)
    assert [arm for arm, ran in semantic.arms.items() if ran] == ["semantic"]
    assert {i.source for i in semantic.items} == {"semantic"} and semantic.mode == "semantic"
    # The toy embedder's meaning is shared words: the notes sharing "deploy" and "slow".
    assert {i.text for i in semantic.items[:2]} == {NOTES[0], NOTES[4]}
    scores = [i.score for i in semantic.items]
    assert scores == sorted(scores, reverse=True) and all(math.isfinite(s) for s in scores)
    # A note sharing no word with the question but carrying its concepts: words find it
    # by its concepts, meaning (the toy's shared words) ranks it last.
    linked = mem.write("Image pulls from mirrors.", concepts=["deploy", "slow"]).id
    assert [i.id for i in mem.read(QUESTION, mode="semantic", k=10).items][-1] == linked
    assert linked in [i.id for i in mem.read(QUESTION, mode="lexical", k=3).items]


def test_a_channel_that_cannot_run_is_refused_naming_why(store_target: Target) -> None:
    with Memory(store_target("bare"), agent_id="ops") as bare:
        bare.write(NOTES[0])
        with pytest.raises(InvalidInput, match="needs an embedder") as caught:
            bare.read(QUESTION, mode="semantic")
        assert caught.value.field == "mode"
        assert bare.read(QUESTION, mode="lexical").items  # words need no embedder
        with pytest.raises(InvalidInput) as caught:
            bare.read(concepts=["deploy"], mode="semantic")
        assert caught.value.field == "query"
        with pytest.raises(InvalidInput) as caught:
            bare.read(QUESTION, mode="vector")
        assert caught.value.field == "mode"
