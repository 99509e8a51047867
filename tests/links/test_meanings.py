"""What outcomes taught reaching a question's unknown words by meaning (`links.meanings`).

Each test runs on both backends, with an embedder that knows a few synonyms
(`tests.synonyms`): "spasm" means what "cramp" means, "calves" what "legs" means.
"""

from __future__ import annotations

from typing import Any

import pytest

from assocmem import Memory
from assocmem.links.meanings import (
    WORDS_READ,
    StandIn,
    _null,
    _pairs,
    _phrased,
    _stand_ins,
    _Vocabulary,
)
from assocmem.text.concepts import tokenize
from assocmem.types import Item
from tests.conftest import Target
from tests.synonyms import NAME as SYNONYMS
from tests.synonyms import synonyms  # noqa: F401  (the fixture)

pytestmark = pytest.mark.usefixtures("synonyms")

FIX = "Stretch slowly, then drink salted water."
SYMPTOM = "My legs cramp on the trail most mornings."
OFFICE = "A quiet desk by the window keeps the office calm."
CHATTER = [f"Note {n} on the garden hose and the tomato beds." for n in range(40)]
# Rated questions, each for its own answer: more words taught than a word's
# stand-ins are drawn from, so the arm can tell near from far.
TAUGHT = [
    ("Why do my legs cramp when I jog far?", FIX),
    ("Hose leaking on the tomato beds?", CHATTER[0]),
    ("Which office desk keeps a job calm?", OFFICE),
]
# No memory holds these words and none was taught; they mean what the first rated
# question asked.
OTHER_WORDS = "Calves spasm during sprints: why?"


def _taught(mem: Memory) -> dict[str, str]:
    ids = {text: str(mem.write(text).id) for text in [FIX, SYMPTOM, OFFICE, *CHATTER]}
    for question, answer in TAUGHT:
        mem.feedback([ids[answer]], 1.0, read=mem.read(question, k=5).id)
    return ids


def _stood_in(item: Item) -> list[tuple[str, ...]]:
    """The paths of the item's `via` that run from a word of `OTHER_WORDS` (which no
    memory holds, so no link starts there) to a taught word."""
    words = set(tokenize(OTHER_WORDS))
    return [v.path for v in item.via if len(v.path) == 2 and v.path[0] in words]


def test_an_unknown_word_finds_what_the_taught_word_it_means_was_taught(
    store_target: Target,
) -> None:
    with Memory(store_target("meant"), agent_id="ops", embedder=SYNONYMS) as mem:
        ids = _taught(mem)
        found = {item.id: item for item in mem.read(OTHER_WORDS, k=5).items}
        assert ids[FIX] in found
        item = found[ids[FIX]]
        assert "learned" not in item.sources  # no word of the question was taught
        assert "precedent" in item.sources
        paths = _stood_in(item)
        assert ("spasm", "cramp") in paths
        assert ("calves", "legs") in paths
        # Each names the taught word as the reader's notes spell it, with its sureness.
        via = next(v for v in item.via if v.path == ("spasm", "cramp"))
        assert via.concept == "cramp" and 0 < via.weight <= 1


def test_words_the_memories_hold_are_read_by_them_not_stood_in_for(
    store_target: Target,
) -> None:
    with Memory(store_target("held"), agent_id="ops", embedder=SYNONYMS) as mem:
        ids = _taught(mem)
        # "trail" and "mornings" are in a note: words find it, nothing stands in (and
        # no rated question meant anything near it).
        items = mem.read("Trail mornings?", k=5).items
        assert items and not any("precedent" in item.sources for item in items)
        # Once a note holds "spasm", it is read by its words, though it means "cramp";
        # "calves", which no note holds, still stands in for "legs".
        mem.write("Spasm drills on Tuesdays.")
        found = {item.id: item for item in mem.read(OTHER_WORDS, k=5).items}
        paths = _stood_in(found[ids[FIX]])
        assert ("calves", "legs") in paths
        assert not any(path[0] == "spasm" for path in paths)


def test_with_too_few_taught_words_or_no_embedder_nothing_stands_in(
    store_target: Target,
) -> None:
    with Memory(store_target("few"), agent_id="ops", embedder=SYNONYMS) as mem:
        ids = {text: str(mem.write(text).id) for text in [FIX, SYMPTOM, *CHATTER]}
        question, answer = TAUGHT[0]  # five words taught: no background to tell from
        mem.feedback([ids[answer]], 1.0, read=mem.read(question, k=5).id)
        assert not any(_stood_in(item) for item in mem.read(OTHER_WORDS, k=5).items)
    with Memory(store_target("plain"), agent_id="ops") as mem:
        ids = _taught(mem)
        result = mem.read(OTHER_WORDS, k=5)
        assert not result.arms["precedent"]
        assert ids[FIX] not in [item.id for item in result.items]


# Asked and rated one by one after the first three, each adding words the arm reads.
MORE = [
    ("Tomato beds dry in the garden?", CHATTER[1]),
    ("Window by the quiet desk?", OFFICE),
    ("Salted water after stretching slowly?", FIX),
    ("Note on the hose again?", CHATTER[2]),
]


def test_a_fresh_process_reads_by_meaning_as_the_teaching_one_did(store_target: Target) -> None:
    target = store_target("restart")
    with Memory(target, agent_id="ops", embedder=SYNONYMS) as mem:
        ids = _taught(mem)
        # Each read between ratings finds the vocabulary grown: what it measures of
        # it must be what a fresh process measures of the same vocabulary.
        for question, answer in MORE:
            mem.read(OTHER_WORDS, k=5)
            mem.feedback([ids[answer]], 1.0, read=mem.read(question, k=5).id)
        before = [(i.id, i.parts) for i in mem.read(OTHER_WORDS, k=10, as_of=_AS_OF).items]
    assert any("precedent" in parts for _, parts in before)
    with Memory(target, agent_id="ops", embedder=SYNONYMS) as fresh:
        after = [(i.id, i.parts) for i in fresh.read(OTHER_WORDS, k=10, as_of=_AS_OF).items]
        assert after == before
    with Memory(target, agent_id="other", embedder=SYNONYMS) as other:
        for text in [FIX, SYMPTOM, *CHATTER]:
            other.write(text)
        assert not any(_stood_in(item) for item in other.read(OTHER_WORDS, k=5).items)


_AS_OF = "2100-01-01T00:00:00Z"


def _stand_in(sureness: float) -> StandIn:
    return StandIn(1, sureness)


def test_two_words_are_read_as_one_phrase_only_where_the_phrase_is_surer() -> None:
    read = {
        "mouth": [_stand_in(0.2)],
        "organ": [_stand_in(0.3)],
        "mouth organ": [_stand_in(0.9)],
        "organ broken": [_stand_in(0.25)],
        "broken": [_stand_in(0.6)],
    }
    assert list(_phrased(["mouth", "organ", "broken"], read)) == ["mouth organ", "broken"]
    read["mouth organ"] = [_stand_in(0.3)]  # no surer than "organ" alone
    assert list(_phrased(["mouth", "organ", "broken"], read)) == ["mouth", "organ", "broken"]


def test_a_stand_in_must_stand_out_from_the_rest_and_be_near() -> None:
    # Taught words as a sentence embedder places nouns: all somewhat alike (a shared
    # part), in threes of one topic. A word with little of the shared part (an
    # abstract word among nouns) has low similarities, close together, so it stands
    # out far toward the word it is least far from, yet it is not near it.
    numpy = pytest.importorskip("numpy")
    rng = numpy.random.default_rng(0)
    dims = 1024

    def unit(v: Any) -> Any:
        return (v / numpy.linalg.norm(v)).astype(numpy.float32)

    shared = unit(rng.normal(size=dims))
    topics = [unit(rng.normal(size=dims)) for _ in range(20)]
    taught = numpy.stack(
        [
            unit(0.6 * shared + 0.5 * t + 0.5 * unit(rng.normal(size=dims)))
            for t in topics
            for _ in "abc"
        ]
    )
    vocabulary = _Vocabulary(list(range(len(taught))), taught, {}, *_null(taught))
    own = taught[0] - (taught[0] @ shared) * shared
    abstract = unit(0.4 * unit(own) + unit(rng.normal(size=dims)))
    synonym = unit(taught[0] + 0.3 * unit(rng.normal(size=dims)))
    found = _stand_ins(vocabulary, ["abstract", "synonym"], numpy.stack([abstract, synonym]))

    def surest(word: str) -> StandIn:
        return max(found[word], key=lambda s: s.sureness)

    near = taught @ abstract
    standing = float((near[0] - near.mean()) / near.std())
    assert vocabulary.sureness(standing, float("inf")) > 0.9  # standing out, it would pass
    assert surest("abstract") == StandIn(0, vocabulary.sureness(standing, float(near[0])))
    assert surest("abstract").sureness < 0.05
    assert surest("synonym").concept_id == 0 and surest("synonym").sureness > 0.95


def test_a_phrase_is_two_unknown_words_next_to_each_other_within_a_clause() -> None:
    unknown = {"mouth", "organ", "wire", "clip", "umpire"}
    question = "Broken mouth organ, wire and umpire: wire clip?"
    assert _pairs(question, unknown) == ["mouth organ", "wire clip"]


def test_a_long_question_is_read_by_meaning_only_in_its_first_words(store_target: Target) -> None:
    with Memory(store_target("long"), agent_id="ops", embedder=SYNONYMS) as mem:
        ids = _taught(mem)
        filler = " ".join(f"zq{n}" for n in range(WORDS_READ))  # words nothing holds
        ahead = {i.id: i for i in mem.read(f"{OTHER_WORDS} {filler}", k=5).items}
        behind = {i.id: i for i in mem.read(f"{filler} {OTHER_WORDS}", k=5).items}
        assert ("spasm", "cramp") in _stood_in(ahead[ids[FIX]])
        assert not any(_stood_in(item) for item in behind.values())
