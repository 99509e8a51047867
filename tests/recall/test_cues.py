"""Reading a question: lexical terms, the semantic probe, author and date cues."""

from __future__ import annotations

import pytest

from assocmem.recall.cues import (
    AUTHOR_TRUST_EXACT,
    AUTHOR_TRUST_PARTIAL,
    TIME_TRUST_DAY,
    TIME_TRUST_MONTH,
    feedback_terms,
    named_periods,
    read_question,
)
from assocmem.recall.profiles import CONVERSATION, GENERAL


def test_question_words_and_named_authors_leave_the_lexical_terms() -> None:
    cues = read_question("What did Caroline's sister paint in the garden?", ["Caroline", "Mel"])
    assert cues.terms == ("sister", "paint", "garden")
    assert cues.authors == (("Caroline", AUTHOR_TRUST_EXACT),)
    assert cues.probe == "What did sister paint in the garden?"


def test_a_part_of_a_longer_name_is_a_weaker_cue() -> None:
    cues = read_question("When did Ada travel?", ["Ada Lovelace", "Al"])
    assert cues.authors == (("Ada Lovelace", AUTHOR_TRUST_PARTIAL),)
    assert "ada" not in cues.terms


def test_short_name_parts_do_not_match_alone() -> None:
    assert read_question("Is al dente pasta good?", ["Al Smith"]).authors == ()


def test_a_question_of_only_a_name_keeps_its_probe() -> None:
    assert read_question("Caroline?", ["Caroline"]).probe == "Caroline?"


@pytest.mark.parametrize(
    ("question", "start", "end", "trust"),
    [
        ("on October 13, 2023?", "2023-10-13", "2023-10-21", TIME_TRUST_DAY),
        ("on 13 Oct 2023", "2023-10-13", "2023-10-21", TIME_TRUST_DAY),
        ("on May 7th, 2023", "2023-05-07", "2023-05-15", TIME_TRUST_DAY),
        ("in December 2023", "2023-12-01", "2024-01-08", TIME_TRUST_MONTH),
    ],
)
def test_named_dates_become_periods(question: str, start: str, end: str, trust: float) -> None:
    (period,) = named_periods(question, CONVERSATION.telling_lag)
    assert period.start.startswith(start) and period.end.startswith(end)
    assert period.trust == trust


def test_only_the_conversation_profile_stretches_a_period_by_the_telling_lag() -> None:
    question = "What happened on October 13, 2023?"
    (general,) = read_question(question, [], GENERAL).periods
    (told,) = read_question(question, [], CONVERSATION).periods
    assert general.end.startswith("2023-10-14")  # the day itself
    assert told.end.startswith("2023-10-21")  # and the week it may be told in
    assert general.start == told.start


def test_reported_speech_words_are_question_words_only_in_conversations() -> None:
    question = "What did Mel ever mention about her sister?"
    assert read_question(question, ["Mel"], CONVERSATION).terms == ("sister",)
    assert read_question(question, ["Mel"], GENERAL).terms == ("mention", "sister")
    # either way "what" shapes the question rather than naming its topic
    assert "what" not in read_question(question, ["Mel"], GENERAL).terms


@pytest.mark.parametrize("question", ["When in July?", "I may go", "on February 30, 2023"])
def test_no_period_without_an_absolute_date(question: str) -> None:
    assert named_periods(question) == ()


def test_feedback_terms_are_words_the_best_hits_share() -> None:
    cues = read_question("What does Joanna bake?", ["Joanna", "Nate"])
    texts = [
        "Joanna: I baked dairy-free brownies with coconut milk.",
        "Nate: coconut milk brownies sound great, Joanna!",
        "Joanna: the coconut ones are my favourite.",
    ]
    extra = feedback_terms(texts, cues)
    assert extra[:2] == ["coconut", "brownies"]
    assert "joanna" not in extra and "nate" not in extra and "bake" not in extra
