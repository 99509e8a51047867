"""Recall profiles: each transcript rule fires under "conversation" and not under "general"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assocmem import InvalidInput, Memory
from assocmem.ingest.transcript import transcript_items
from assocmem.recall import profiles
from tests.conftest import Target


@pytest.fixture
def mem(store_target: Target) -> Iterator[Memory]:
    with Memory(store_target("profiles"), agent_id="ops", profile="conversation") as memory:
        yield memory


def test_profiles_are_looked_up_by_name() -> None:
    assert profiles.named("general") is profiles.GENERAL
    assert profiles.named("conversation") is profiles.CONVERSATION
    with pytest.raises(InvalidInput) as raised:
        profiles.named("chat")
    assert raised.value.field == "profile"


def test_an_unknown_profile_is_an_input_error(store_target: Target) -> None:
    with pytest.raises(InvalidInput) as raised:
        Memory(store_target("unknown"), profile="transcript")
    assert raised.value.field == "profile"
    with Memory(store_target("unknown"), agent_id="ops") as mem:
        mem.write("the kettle boiled over")
        with pytest.raises(InvalidInput) as raised:
            mem.read("kettle", profile="dialogue")
        assert raised.value.field == "profile"
        with pytest.raises(InvalidInput):
            mem.read("kettle", profile=3)  # type: ignore[arg-type]


def test_the_default_profile_is_general(store_target: Target) -> None:
    with Memory(store_target("default"), agent_id="ops") as mem:
        mem.write("Who fixed the printer?")
        (item,) = mem.read("printer").items
        assert "question" not in item.parts  # no question fold
        (folded,) = mem.read("printer", profile="conversation").items
        assert folded.parts["question"] == pytest.approx(0.9)


def test_the_telling_lag_stretches_a_named_day_only_in_conversations(mem: Memory) -> None:
    told = mem.write("We shipped the invoice page", observed_at="2023-05-13T12:00:00Z")
    question = "What did we ship on 10 May, 2023?"
    (item,) = mem.read(question).items
    assert item.id == told.id and item.parts["prefer"] > 1.0  # told three days later
    (general,) = mem.read(question, profile="general").items
    assert general.parts["prefer"] == 1.0  # observed after the day named: no date cue


def test_reported_speech_words_match_only_outside_conversations(mem: Memory) -> None:
    mem.write_many(
        [
            {"text": "Bo: I mentioned the weather twice", "author": "Bo"},
            {"text": "Ana: zebras are great", "author": "Ana"},
        ]
    )
    question = "What did Ana ever mention about zebras?"
    lexical = {i.text: i.sources.get("lexical") for i in mem.read(question).items}
    assert lexical.get("Bo: I mentioned the weather twice") is None
    general = mem.read(question, profile="general").items
    found = {i.text: i.sources.get("lexical") for i in general}
    assert found["Bo: I mentioned the weather twice"] is not None


def _thread(mem: Memory) -> tuple[str, str]:
    """A thread whose middle turn matches best; the turns around it share no word."""
    before, _, after = (
        r.id or ""
        for r in mem.write_many(
            [
                {"text": "Carol: morning all", "author": "Carol", "thread": "s1"},
                {"text": "Dave: zebra crossing zebra crossing", "author": "Dave", "thread": "s1"},
                {"text": "Carol: five years already", "author": "Carol", "thread": "s1"},
            ]
        )
    )
    mem.write_many([{"text": "zebra crossing paint"}, {"text": "a zebra at the zoo"}])
    return before, after


def test_the_turn_after_a_match_gains_more_only_in_conversations(mem: Memory) -> None:
    before, after = _thread(mem)

    def lexical_ranks(profile: str) -> dict[str, int]:
        items = mem.read("zebra crossing", profile=profile).items
        return {i.id: i.sources["lexical"] for i in items if i.id in (before, after)}

    conversation = lexical_ranks("conversation")
    assert conversation[after] < conversation[before]  # the reply follows the match
    general = lexical_ranks("general")
    assert general[before] < general[after]  # equal shares: the older turn first


def test_a_transcript_becomes_write_items() -> None:
    text = "Ana: I swim on Sundays\n\n  Ben : Since when?\nAna: since May: every week"
    items = transcript_items(text, thread="s1", observed_at="2023-05-08T13:56:00Z")
    assert items == [
        {"text": "Ana: I swim on Sundays", "author": "Ana", "thread": "s1",
         "observed_at": "2023-05-08T13:56:00Z"},
        {"text": "Ben: Since when?", "author": "Ben", "thread": "s1",
         "observed_at": "2023-05-08T13:56:00Z"},
        {"text": "Ana: since May: every week", "author": "Ana", "thread": "s1",
         "observed_at": "2023-05-08T13:56:00Z"},
    ]  # fmt: skip
    turns = [{"speaker": "Ana", "text": "hi", "meta": {"n": 1}, "thread": "s2"}]
    assert transcript_items(turns) == [
        {"text": "Ana: hi", "author": "Ana", "thread": "s2", "meta": {"n": 1}}
    ]
    for bad in (["no speaker here"], [{"speaker": "Ana"}], [{"text": "x", "who": "A"}], [3]):
        with pytest.raises(InvalidInput) as raised:
            transcript_items(bad)  # type: ignore[arg-type]
        assert raised.value.field == "turns"


def test_an_ingested_transcript_is_read_as_a_conversation(store_target: Target) -> None:
    turns = ["Dave: How long have you been married?", "Carol: Five years already!"]
    with Memory(store_target("ingest"), agent_id="ops", profile="conversation") as mem:
        results = mem.write_many(transcript_items(turns, thread="s1"))
        assert all(r.stored for r in results)
        (record,) = mem.get([results[1].id or ""])
        assert (record.author, record.thread, record.text) == (
            "Carol", "s1", "Carol: Five years already!"
        )  # fmt: skip
        assert results[1].id in [i.id for i in mem.read("How long has Carol been married?").items]
