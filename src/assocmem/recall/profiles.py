"""Recall profiles: the ranking rules that fit one kind of corpus, chosen by name.

Invariant: every read runs under exactly one frozen `Profile`. `GENERAL` (the
default) holds only rules that fit any store; `CONVERSATION` adds the five rules
measured on chat transcripts (LoCoMo), each named by a field below, and nothing
else. A name no profile has is an `InvalidInput` on ``profile``.

One rule acts at write time: ``strip_speaker_label`` decides the text a memory's
vector is made from, so a store's vectors reflect the profile they were written
with; reading under another profile changes the ranking rules, not those vectors.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from assocmem.errors import InvalidInput
from assocmem.recall.fusion import DECAY_WEIGHT, VALUE_EXPONENT

# Words that shape a question rather than say what it is about. As lexical terms
# they match every memory that happens to ask or tell something.
QUESTION_WORDS = frozenset(
    "what when where who whom whose which why how whats kind kinds type types sort sorts".split()
)
# Questions about a conversation ask what someone mentioned, told or said; in a
# transcript those words match every turn that reports speech, not the topic.
TRANSCRIPT_QUESTION_WORDS = frozenset(
    "ever mention mentioned mentions tell told say said describe described".split()
)


@dataclass(frozen=True)
class Profile:
    """The corpus-specific ranking rules of a read.

    ``question_words``: words never used as lexical terms. ``telling_lag``: how far
    a period a question names is extended past its end (an event is told at or
    after it happened). ``question_fold``: fold down memories that end asking.
    ``thread_forward`` / ``thread_backward``: the share of a thread neighbour's arm
    score a memory gains from the memory before / after it. ``strip_speaker_label``:
    embed a memory without a leading label naming its own author (at write time).
    ``decay_weight`` / ``value_exponent``: how strongly age and importance move a
    ranking (`fusion.decay_factor`, `fusion.value_factor`); both profiles keep the
    bounded folds argued in `fusion` and measured by ``assocmem bench folds``.
    """

    name: str
    question_words: frozenset[str]
    telling_lag: timedelta
    question_fold: bool
    thread_forward: float
    thread_backward: float
    strip_speaker_label: bool
    decay_weight: float = DECAY_WEIGHT
    value_exponent: float = VALUE_EXPONENT


# Thread smoothing in any store: a neighbour in a thread is related in either
# direction, so both sides share a quarter of their score.
GENERAL = Profile(
    name="general",
    question_words=QUESTION_WORDS,
    telling_lag=timedelta(0),
    question_fold=False,
    thread_forward=0.25,
    thread_backward=0.25,
    strip_speaker_label=False,
)

# Chat transcripts ("Speaker: text" turns, one author and thread per turn):
# - a memory records an event when it is told, at or soon after it happened: a
#   named period is extended by a week after its end;
# - a turn that ends asking states nothing of what it asks, yet matches a
#   question's form word for word and in embedding space: it is folded down by
#   its closing questions' share of its words (see `fusion.question_share`);
# - a reply follows what prompted it and often shares no words with a question
#   about it ("How long have you been married?" → "5 years already!"), so the
#   turn after a match gains more than the turn before;
# - the speaker label is who spoke, a field of its own (preferred when a question
#   names them): the vector is made from what was said.
CONVERSATION = Profile(
    name="conversation",
    question_words=QUESTION_WORDS | TRANSCRIPT_QUESTION_WORDS,
    telling_lag=timedelta(days=7),
    question_fold=True,
    thread_forward=0.5,
    thread_backward=0.25,
    strip_speaker_label=True,
)

PROFILES: dict[str, Profile] = {p.name: p for p in (GENERAL, CONVERSATION)}


def named(name: Any) -> Profile:
    """The profile called ``name``."""
    if not isinstance(name, str) or name not in PROFILES:
        raise InvalidInput(f"profile must be one of {', '.join(PROFILES)}", field="profile")
    return PROFILES[name]
