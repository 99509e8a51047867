"""What the words have to go on: coverage, the word arms' vote shares, and thread caps.

The read-level tests use an embedder that knows a few synonyms (`tests.synonyms`),
so meaning without shared words is exact and fast on both backends; `bench locomo`'s
`no shared words` slice measures the same on real text with the default embedder.
"""

from __future__ import annotations

import pytest

from assocmem import Memory
from assocmem.recall import fusion, weighing
from assocmem.recall.fusion import Fusion
from assocmem.recall.profiles import CONVERSATION
from tests.conftest import Target
from tests.synonyms import synonyms  # noqa: F401  (the fixture)

FIRST_STAGE = ("episodic", "lexical", "semantic", "concept_scoped", "hebbian_retrieval")

# Every test here may attach the embedder that knows a few synonyms.
pytestmark = pytest.mark.usefixtures("synonyms")

NOTE = "Running longer distances helps me relax after work."
# Shares no word with NOTE, and one everyday word with each line of chatter.
REMARK = "Good week? Do you jog farther lately to unwind from the office?"
CHATTER = [
    "The week flew by with the lake trip and a barbecue.",
    "Good news about the kitchen tiles, they finally arrived.",
    "Next week my sister visits with her two dogs.",
    "A good book and tea on the porch tonight.",
    "This week the garden finally got some rain.",
    "Good thing the car passed its inspection.",
]
# Near the remark in meaning, one or two senses each, sharing none of its words.
RELATED = [
    "A quick dash from my desk to catch the bus.",
    "Soothing music at my job makes the hours pass.",
    "The longer route home takes an hour by bike.",
    "Sprinting up the stairs to my desk every morning.",
    "A warm bath helps me calm down at night.",
    "The distance to the new job is twice the old one.",
]


def _conversation(mem: Memory, written: list[tuple[str, str]] | None = None) -> str:
    """Chatter, related lines and small talk in sessions, the note in one of them;
    returns the note's id (and adds each memory's id and thread, in order, to ``written``)."""
    written = [] if written is None else written
    turns = [f"Session {n} small talk about the garden and the weather." for n in range(48)]
    for i, text in enumerate(CHATTER):
        turns[i * 8 + 1] = text
    for i, text in enumerate(RELATED):
        turns[i * 8 + 4] = text
    note_id = ""
    for i, text in enumerate(turns):
        thread = f"session-{i // 6}"
        written.append(
            (mem.write(text, thread=thread, author="Ana" if i % 2 else "Ben").id, thread)
        )
        if i == 20:
            note_id = mem.write(NOTE, thread=thread, author="Ben").id
            written.append((note_id, thread))
    return note_id


def test_matches_on_everyday_words_cast_a_fraction_of_a_vote(store_target: Target) -> None:
    with Memory(store_target("meaning"), agent_id="ops", embedder="synonyms") as mem:
        note = _conversation(mem)
        result = mem.read(REMARK, k=10)
        found = {item.id: item for item in result.items}
        assert found[note].sources.get("semantic") == 1  # meaning alone ranks it first
        assert "lexical" not in found[note].sources
        # the chatter's matches rest on one or two everyday words of a long remark:
        # each votes for less than half of what a decisive match would
        chatter = [i for i in result.items if "lexical" in i.sources]
        assert chatter
        for item in chatter:
            full = fusion.ARM_WEIGHTS["lexical"] / (fusion.RRF_K + item.sources["lexical"])
            assert item.parts["lexical"] < 0.5 * full
            if "concept_scoped" in item.sources:  # the same words, pulled as concepts
                rank = item.sources["concept_scoped"]
                full = fusion.ARM_WEIGHTS["concept_scoped"] / (fusion.RRF_K + rank)
                assert item.parts["concept_scoped"] < 0.5 * full


def test_words_that_decide_vote_in_full(store_target: Target) -> None:
    with Memory(store_target("decisive"), agent_id="ops", embedder="synonyms") as mem:
        note = _conversation(mem)
        result = mem.read("relaxing after work by running longer distances", k=5)
        top = result.items[0]
        assert top.id == note
        rank = top.sources["lexical"]
        assert top.parts["lexical"] == pytest.approx(
            fusion.ARM_WEIGHTS["lexical"] / (fusion.RRF_K + rank)
        )


def test_concepts_a_caller_names_are_taken_as_given(store_target: Target) -> None:
    with Memory(store_target("given"), agent_id="ops", embedder="synonyms") as mem:
        _conversation(mem)
        result = mem.read(REMARK, concepts=["week"], k=10)
        voted = [i for i in result.items if "concept_scoped" in i.sources]
        assert voted
        for item in voted:
            rank = item.sources["concept_scoped"]
            full = fusion.ARM_WEIGHTS["concept_scoped"] / (fusion.RRF_K + rank)
            assert item.parts["concept_scoped"] == pytest.approx(full)


def test_a_thread_neighbour_gets_no_more_than_its_share_of_the_hit_it_borders(
    store_target: Target,
) -> None:
    target = store_target("threads")
    with Memory(target, agent_id="ops", embedder="synonyms", profile="conversation") as mem:
        written: list[tuple[str, str]] = []
        _conversation(mem, written)
        result = mem.read(REMARK, k=len(written))
    parts = {item.id: item.parts for item in result.items}
    # what a hit had when its neighbours were looked up: the arms that match the question
    first = {key: sum(v for arm, v in p.items() if arm in FIRST_STAGE) for key, p in parts.items()}
    neighbours = [pos for pos, (key, _) in enumerate(written) if "thread" in parts.get(key, {})]
    assert neighbours
    for pos in neighbours:
        key, thread = written[pos]
        before = written[pos - 1] if pos > 0 and written[pos - 1][1] == thread else None
        after = (
            written[pos + 1] if pos + 1 < len(written) and written[pos + 1][1] == thread else None
        )
        cap = max(
            CONVERSATION.thread_forward * first.get(before[0], 0.0) if before else 0.0,
            CONVERSATION.thread_backward * first.get(after[0], 0.0) if after else 0.0,
        )
        assert parts[key]["thread"] <= cap + 1e-12


def test_without_an_embedder_a_read_still_ranks_by_its_words(store_target: Target) -> None:
    with Memory(store_target("plain"), agent_id="ops") as mem:
        note = _conversation(mem)
        result = mem.read("running distances after work", k=3)
        assert result.items[0].id == note
        assert not result.arms["semantic"]


# -- the pure parts -----------------------------------------------------------------


def test_idf_is_positive_and_falls_as_a_word_spreads() -> None:
    values = [weighing.idf(n, 1000) for n in (0, 1, 10, 500, 1000)]
    assert all(v > 0 for v in values)
    assert values == sorted(values, reverse=True)


def test_coverage_weighs_words_by_how_rare_they_are() -> None:
    counts = {"kayak": 1, "trip": 40, "great": 300}
    measure = weighing.Coverage(["kayak", "trip", "great"], counts, 1000)
    assert measure.of("A great kayak trip!") == pytest.approx(1.0)
    rare, common = measure.of("my kayak"), measure.of("great weather")
    assert rare > 0.5 > common > 0.0
    assert measure.of("Trips were taken") == measure.of("one trip")  # stems fold


def test_words_no_memory_holds_count_in_the_whole() -> None:
    known = weighing.Coverage(["lake"], {"lake": 5}, 100)
    with_unknown = weighing.Coverage(["lake", "zyzzyva"], {"lake": 5}, 100)
    assert known.of("the lake") == 1.0
    assert with_unknown.of("the lake") < 0.5


def test_word_votes_are_full_only_when_the_words_decide() -> None:
    weak = weighing.WordEvidence({1: 0.2, 2: 0.1})
    assert not weak.decisive
    assert weak.votes([1, 2, 3]) == {1: pytest.approx(0.4), 2: pytest.approx(0.2), 3: 0.0}
    assert weak.arm == pytest.approx(0.4)
    strong = weighing.WordEvidence({1: weighing.WORDS_DECIDE, 2: 0.1})
    assert strong.decisive
    assert strong.votes([1, 2]) == {1: 1.0, 2: 1.0} and strong.arm == 1.0


def test_coverage_spreads_along_threads_like_scores() -> None:
    spread = weighing.spread({2: 0.8}, {2: (1, 3), 1: (None, 2), 3: (2, None)},
                             forward=0.5, backward=0.25)  # fmt: skip
    assert spread == {1: pytest.approx(0.2), 2: pytest.approx(0.8), 3: pytest.approx(0.4)}


def test_a_capped_vote_is_never_more_than_its_cap() -> None:
    votes: Fusion[int] = Fusion(weights={"a": 1.0, "thread": 0.5})
    votes.add({"a": [1, 2]})
    votes.add({"thread": [3, 4]}, caps={"thread": {3: 0.001}})
    parts = {f.key: f.parts for f in votes.ranked()}
    assert parts[3]["thread"] == 0.001
    assert parts[4]["thread"] == pytest.approx(0.5 / (fusion.RRF_K + 2))
