"""Lessons: what an outcome teaches reaches the reader's top k, and stays honest."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from assocmem import Memory
from assocmem.recall.fusion import rrf
from tests.conftest import Target, raw_query, write_seed

NOTES = (
    "The connection pool ran dry during the nightly batch.",
    "Pool exhaustion shows up as stalled requests at night.",
    "Rotate the keyring and flush the resolver cache.",
    "Coffee machine descaled on Monday morning.",
    "The printer jammed twice before lunch.",
    "Thermostat ledger reconciled by the facilities team.",
)
FIX = NOTES[2]  # shares no word with any question about the pool
# Reads compared across calls are measured at one moment, so decay moves no score.
AS_OF = datetime.now(UTC) + timedelta(hours=1)


def _write(mem: Memory) -> dict[str, str]:
    results = mem.write_many([{"text": t} for t in NOTES])
    return {t: r.id for t, r in zip(NOTES, results, strict=True) if r.id}


def _teach(mem: Memory, question: str, memory_id: str, outcome: float = 1.0) -> None:
    result = mem.read(question, k=5)
    mem.feedback([memory_id], outcome=outcome, query_concepts=result.query_concepts)


def test_one_outcome_brings_a_memory_no_word_reaches_into_the_top_five(mem: Memory) -> None:
    ids = _write(mem)
    held_out = "What helped when the pool was dry?"
    assert ids[FIX] not in [i.id for i in mem.read(held_out, k=5).items]
    _teach(mem, "How do I fix the pool running dry again?", ids[FIX])
    items = mem.read(held_out, k=5).items
    assert items[0].id == ids[FIX]
    assert items[0].source == "learned"
    assert {v.concept for v in items[0].via} == {"pool", "dry"}
    assert all(v.path == (v.concept,) and v.weight == 1.0 for v in items[0].via)
    by_concepts = mem.read(concepts=["pool", "dry"], k=5).items
    assert by_concepts[0].id == ids[FIX] and by_concepts[0].source == "learned"


def test_a_read_whose_concepts_were_never_taught_is_unchanged(mem: Memory) -> None:
    ids = _write(mem)
    question = "Why did the printer jam before lunch?"
    before = mem.read(question, k=5, as_of=AS_OF)
    _teach(mem, "How do I fix the pool running dry again?", ids[FIX])
    after = mem.read(question, k=5, as_of=AS_OF)
    assert [(i.id, i.score, i.source) for i in after.items] == [
        (i.id, i.score, i.source) for i in before.items
    ]


def test_a_filler_taught_with_every_answer_points_nowhere(mem: Memory) -> None:
    ids = _write(mem)
    _teach(mem, "How do I fix the pool running dry again?", ids[FIX])
    _teach(mem, "How do I fix the printer jamming again?", ids[NOTES[3]])
    # "fix" was asked about twice and each answer helped once: neither holds a majority.
    result = mem.read(concepts=["fix"], k=5)
    assert all(i.source != "learned" for i in result.items)
    assert result.items == ()


def test_answers_past_questions_shared_reach_a_question_asking_what_they_were_taught(
    mem: Memory,
) -> None:
    ids = _write(mem)
    fix, ledger = ids[FIX], ids[NOTES[5]]
    # Two past questions about the stalled pool, each answered by another note: no
    # note holds most of "pool" or "stall", yet each was taught the whole question.
    _teach(mem, "Why does the pool stall at night?", fix)
    _teach(mem, "Why does the pool stall during the batch?", ledger)
    _teach(mem, "Why does the pool stall on Mondays?", fix)
    result = mem.read(concepts=["pool", "stall"], k=5)
    learned = {i.id: i for i in result.items if i.source == "learned"}
    assert set(learned) == {fix, ledger}
    assert {v.concept for v in learned[ledger].via} == {"pool", "stalled"}
    # Words no lesson knows weigh against the broad reading: the question asks more.
    # Each taught concept reaches both notes (information ln 2), each unknown one counts
    # as much as a concept no lesson spreads (ln 3): the ledger's lessons cover
    # 2 ln 2 / (2 ln 2 + 3 ln 3) of this question, and its vote shrinks by as much.
    assert learned[ledger].parts["learned"] == pytest.approx(4.0 * (1 / 3) / 62)
    covered = 2 * math.log(2) / (2 * math.log(2) + 3 * math.log(3))
    wider = mem.read(concepts=["pool", "stall", "zebrafish", "quasar", "marmalade"], k=5)
    ranked = [i.id for i in wider.items]
    assert ranked.index(fix) < ranked.index(ledger)
    shrunk = wider.items[ranked.index(ledger)].parts["learned"]
    assert shrunk == pytest.approx(4.0 * (1 / 3) * covered / 62)
    # One concept shared by several answers is left to the sharp reading.
    alone = mem.read(concepts=["stall"], k=5)
    assert ledger not in {i.id for i in alone.items if i.source == "learned"}


def test_a_vote_counts_how_exclusively_the_lessons_name_the_memory(mem: Memory) -> None:
    ids = _write(mem)
    fix, ledger = ids[FIX], ids[NOTES[5]]
    _teach(mem, "Why does the pool stall at night?", fix)
    _teach(mem, "Why does the pool stall during the batch?", ledger)
    _teach(mem, "Why does the pool stall on Mondays?", fix)
    items = {i.id: i for i in mem.read(concepts=["pool", "stall"], k=5).items}
    # Both were taught the whole question (support 1), but "pool stall" was answered
    # with the fix two times in three and with the ledger once: votes of 2/3 and 1/3.
    assert items[fix].parts["learned"] == pytest.approx(4.0 * (2 / 3) / 61)
    assert items[ledger].parts["learned"] == pytest.approx(4.0 * (1 / 3) / 62)
    # A memory every such question was answered with keeps the whole vote.
    _teach(mem, "Why is the printer ledger jammed?", ids[NOTES[4]])
    alone = mem.read(concepts=["printer", "ledger", "jam"], k=5).items
    assert alone[0].id == ids[NOTES[4]]
    assert alone[0].parts["learned"] == pytest.approx(4.0 / 61)


def test_a_noisy_teacher_s_most_rated_answer_keeps_its_share(mem: Memory) -> None:
    ids = _write(mem)
    asked = ["pool", "stall"]
    for memory_id in [ids[FIX], ids[NOTES[3]], ids[FIX], ids[NOTES[4]], ids[NOTES[5]]]:
        mem.feedback([memory_id], 1.0, query_concepts=asked)
    # Two ratings in five, three wrong ones scattered over other notes: no majority,
    # but no other note was rated as often, so the fix leads and keeps its share,
    # counted once, though the question also asks an untaught concept.
    items = mem.read(concepts=[*asked, "printer"], k=5).items
    assert items[0].id == ids[FIX] and items[0].source == "learned"
    assert items[0].parts["learned"] == pytest.approx(4.0 * (2 / 5) / 61)
    wrong = [i.parts.get("learned", 0.0) for i in items[1:]]
    assert max(wrong) < items[0].parts["learned"] / 4
    # Rated as often as the fix, a wrong note takes the lead from it: neither leads.
    mem.feedback([ids[NOTES[3]]], 1.0, query_concepts=asked)
    tied = {i.id: i for i in mem.read(concepts=[*asked, "printer"], k=5).items}
    for memory_id in (ids[FIX], ids[NOTES[3]]):
        assert tied[memory_id].parts["learned"] < items[0].parts["learned"] / 2


def test_memories_only_lessons_bring_do_not_widen_the_question(mem: Memory) -> None:
    ids = _write(mem)
    mem.write_many([{"text": f"Shelf {n} of the archive holds ledgers."} for n in range(40)])
    also = mem.write("Flush the resolver whenever the keyring changes.").id
    kin = mem.write("The resolver keyring audit is due on Friday.").id
    result = mem.read("How do I fix the pool running dry again?", k=5)
    mem.feedback([ids[FIX], also], 1.0, query_concepts=result.query_concepts)
    items = mem.read("What helped when the pool was dry?", k=10).items
    assert {i.id for i in items[:2]} == {ids[FIX], also}
    # Both answers share "keyring" and "resolver", the question neither: a search
    # widened by the answers' words would reach the audit note. They are guesses
    # lessons made, not matches of the question, so nothing widens by them.
    assert all("lexical_expansion" not in i.sources for i in items if i.id == kin)


def test_lessons_survive_reopening_and_a_rebuilt_store_lacks_them(store_target: Target) -> None:
    question = "What helped when the pool was dry?"
    with Memory(store_target("taught"), agent_id="ops") as mem:
        ids = _write(mem)
        _teach(mem, "How do I fix the pool running dry again?", ids[FIX])
        taught = [(i.id, i.score) for i in mem.read(question, k=5, as_of=AS_OF).items]
    with Memory(store_target("taught"), agent_id="ops") as mem:
        assert [(i.id, i.score) for i in mem.read(question, k=5, as_of=AS_OF).items] == taught
    with Memory(store_target("rebuilt"), agent_id="ops") as rebuilt:
        _write(rebuilt)  # the same notes, without what the outcome taught
        assert FIX not in [i.text for i in rebuilt.read(question, k=5).items]


def test_a_bad_outcome_unteaches_and_never_goes_below_zero(store_target: Target) -> None:
    target = store_target()
    with Memory(target, agent_id="ops") as mem:
        ids = _write(mem)
        question = "How do I fix the pool running dry again?"
        _teach(mem, question, ids[FIX])
        for _ in range(3):
            _teach(mem, question, ids[FIX], outcome=-1.0)
        assert all(i.source != "learned" for i in mem.read(question, k=5).items)
        _teach(mem, question, ids[FIX])
        assert mem.read("pool dry", k=5).items[0].id == ids[FIX]
    weights = raw_query(target, "SELECT SUM(weight) FROM lessons GROUP BY concept_id, memory_seq")
    assert {round(w, 9) for (w,) in weights} == {1.0}


def test_a_lesson_on_a_restricted_memory_stays_in_its_access_class(db_path: str) -> None:
    question = "What helped when the pool was dry?"
    with (
        Memory(db_path, agent_id="ops", role="maintainer") as maintainer,
        Memory(db_path, agent_id="ops") as plain,
    ):
        ids = _write(plain)
        secret = maintainer.write("Swap the grommet on the sprocket.", access=["maintainer"])
        assert secret.id is not None
        _teach(maintainer, "How do I fix the pool running dry again?", secret.id)
        assert maintainer.read(question, k=5).items[0].id == secret.id
        before = [(i.id, i.score) for i in plain.read(question, k=5, as_of=AS_OF).items]
        # What the plain role reads is untouched by the restricted lesson, and its own
        # lesson for the same concepts is whole (the restricted call is not counted).
        _teach(plain, "How do I fix the pool running dry again?", ids[FIX])
        top = plain.read(question, k=5).items[0]
        assert top.id == ids[FIX] and top.parts["learned"] == pytest.approx(4.0 / 61)
        assert secret.id not in [i.id for i in plain.read(question, k=5).items]
        assert before and ids[FIX] not in [i for i, _ in before]


def test_agents_and_projects_learn_apart(db_path: str) -> None:
    question = "What helped when the pool was dry?"
    with (
        Memory(db_path, agent_id="alice") as alice,
        Memory(db_path, agent_id="bob") as bob,
        Memory(db_path, agent_id="bob", project_id="alpha") as alpha,
    ):
        alice_ids, bob_ids = _write(alice), _write(bob)
        before = [(i.id, i.score) for i in bob.read(question, k=5, as_of=AS_OF).items]
        _teach(alice, "How do I fix the pool running dry again?", alice_ids[FIX])
        assert [(i.id, i.score) for i in bob.read(question, k=5, as_of=AS_OF).items] == before
        _teach(alpha, "How do I fix the pool running dry again?", bob_ids[FIX])
        assert alpha.read(question, k=5).items[0].id == bob_ids[FIX]
        assert [(i.id, i.score) for i in bob.read(question, k=5, as_of=AS_OF).items] == before


def test_forget_takes_a_memory_s_lessons_with_it(store_target: Target) -> None:
    target = store_target()
    with Memory(target, agent_id="ops") as mem:
        ids = _write(mem)
        _teach(mem, "How do I fix the pool running dry again?", ids[FIX])
        assert raw_query(target, "SELECT COUNT(*) FROM lessons")[0][0] > 0
        mem.forget([ids[FIX]])
        assert raw_query(target, "SELECT COUNT(*) FROM lessons")[0][0] == 0
        assert all(i.source != "learned" for i in mem.read("pool dry", k=5).items)


def test_feedback_reports_the_lessons_it_taught(mem: Memory) -> None:
    ids = _write(mem)
    result = mem.feedback([ids[FIX], ids[NOTES[4]]], 1.0, query_concepts=["pool", "dry"])
    assert result.lessons_updated == 4
    # Both memories were rated by the one call: each holds the whole of it.
    items = mem.read(concepts=["pool", "dry"], k=5).items
    learned = {i.id for i in items if i.source == "learned"}
    assert learned == {ids[FIX], ids[NOTES[4]]}


def test_confidence_scales_an_arm_s_vote() -> None:
    fused = rrf({"learned": [1, 2], "lexical": [2]}, confidence={"learned": {1: 0.5, 2: 1.0}})
    parts = {f.key: f.parts for f in fused}
    assert parts[1]["learned"] == pytest.approx(4.0 * 0.5 / 61)
    assert parts[2]["learned"] == pytest.approx(4.0 / 62)
    assert parts[2]["lexical"] == pytest.approx(1.0 / 61)


def test_a_question_spelling_a_concept_in_two_words_reaches_it(mem: Memory) -> None:
    write_seed(mem)
    result = mem.read("why does the deploy time out?")
    assert "timeout" in result.query_concepts
    assert result.expanded_concepts  # the timeout links are followed
    # A pair no memory carries as one word adds nothing.
    assert "deploytime" not in result.query_concepts
