"""Read handles, and what outcomes teach reaching questions in other words (precedents).

Each test runs on both backends. The meaning tests attach an embedder that knows a
few synonyms (`tests.synonyms`): the later question shares no word with the rated
one, so only the rated read's meaning can carry what it was taught.
"""

from __future__ import annotations

import random
import sqlite3

import pytest

from assocmem import InvalidInput, Memory, UnknownRead
from assocmem.capabilities import migrations
from assocmem.links import store_reads
from tests.conftest import Target, raw_query
from tests.synonyms import NAME as SYNONYMS
from tests.synonyms import synonyms  # noqa: F401  (the fixture)

pytestmark = pytest.mark.usefixtures("synonyms")
AS_OF = "2100-01-01T00:00:00Z"

FIX = "Stretch slowly, then drink salted water."
WRONG = "Oil the bicycle chain every month."
SYMPTOMS = [
    "My legs cramp on the trail most mornings.",
    "Cramp in the calf again after the hill.",
    "Jogging far on hot days wears me out.",
]
ASKED = [
    "Why do my legs cramp when I jog far?",
    "Legs cramp after a far jog: why?",
    "What fixes legs that cramp on a far jog?",
    "Any fix for legs cramping when I jog far?",
]
# Shares no word with any question above, and means what they mean.
OTHER_WORDS = "Calves spasm following a long sprint: remedy?"


def _notes(mem: Memory) -> dict[str, str]:
    """The notes, the fixing one among eighty that share no sense with the questions."""
    chatter = [f"Note {n} on the garden hose and the tomato beds." for n in range(80)]
    texts = [*chatter[:40], FIX, WRONG, *SYMPTOMS, *chatter[40:]]
    return {text: str(mem.write(text).id) for text in texts}


def _rank(mem: Memory, question: str, memory_id: str, k: int = 5) -> int | None:
    ids = [item.id for item in mem.read(question, k=k).items]
    return ids.index(memory_id) + 1 if memory_id in ids else None


# -- the handle ----------------------------------------------------------------------


def test_every_read_returns_a_handle_that_teaches_what_it_asked(store_target: Target) -> None:
    with Memory(store_target("handle"), agent_id="ops") as mem:
        ids = _notes(mem)
        asked = mem.read(ASKED[0], k=5)
        assert asked.id and asked.id != mem.read(ASKED[0], k=5).id
        assert _rank(mem, ASKED[0], ids[FIX]) is None  # no word of the question in it
        rated = mem.feedback([ids[FIX]], 1.0, read=asked.id)
        assert rated.lessons_updated == len(asked.query_concepts)
        found = mem.read(ASKED[0], k=5).items[0]
        assert found.id == ids[FIX] and found.source == "learned"


def test_feedback_names_its_read_or_its_concepts(store_target: Target) -> None:
    with Memory(store_target("neither"), agent_id="ops") as mem:
        ids = _notes(mem)
        with pytest.raises(InvalidInput) as refused:
            mem.feedback([ids[FIX]], 1.0)
        assert refused.value.field == "read" and "query_concepts" in str(refused.value)
        for bad in ("", "not a handle!", 7):
            with pytest.raises(InvalidInput) as malformed:
                mem.feedback([ids[FIX]], 1.0, read=bad)  # type: ignore[arg-type]
            assert malformed.value.field == "read"
        assert mem.feedback([ids[FIX]], 1.0, query_concepts=[]).lessons_updated == 0
        assert mem.stats().feedback == 1  # the refused calls changed nothing


def test_a_handle_from_another_agent_or_a_forgotten_answer_is_unknown(
    store_target: Target,
) -> None:
    target = store_target("foreign")
    with Memory(target, agent_id="ops") as mem, Memory(target, agent_id="other") as other:
        ids = _notes(mem)
        mine = mem.read(ASKED[0], k=5)
        theirs = other.read(ASKED[0], k=5)
        with pytest.raises(UnknownRead):
            mem.feedback([ids[FIX]], 1.0, read=theirs.id)
        returned = mine.items[0].id
        mem.forget(ids=[returned])
        with pytest.raises(UnknownRead):  # it returned what is forgotten: gone with it
            mem.feedback([ids[FIX]], 1.0, read=mine.id)


def test_unrated_reads_are_kept_to_a_bound_rated_ones_as_long_as_their_lessons(
    store_target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_reads, "READS_KEPT", 3)
    monkeypatch.setattr(store_reads, "PRUNE_EVERY", 1)
    target = store_target("bounded")
    with Memory(target, agent_id="ops") as mem:
        ids = _notes(mem)
        rated, oldest = mem.read(ASKED[0], k=1), mem.read(ASKED[1], k=1)
        mem.feedback([ids[FIX]], 1.0, read=rated.id)
        later = [mem.read(question, k=1) for question in ASKED]
        with pytest.raises(UnknownRead):
            mem.feedback([ids[FIX]], 1.0, read=oldest.id)
        mem.feedback([ids[FIX]], 1.0, read=rated.id)  # rated: kept
        mem.feedback([ids[FIX]], 1.0, read=later[-1].id)
    # What a pruned read returned goes with it; every kept read keeps its items.
    kept = raw_query(target, "SELECT r.id, COUNT(i.memory_seq) FROM reads r"
                     " LEFT JOIN read_items i ON i.read_seq = r.seq GROUP BY r.id")  # fmt: skip
    assert len(kept) == 4 and all(items == 1 for _, items in kept)
    assert raw_query(
        target, "SELECT COUNT(*) FROM read_items WHERE read_seq NOT IN (SELECT seq FROM reads)"
    ) == [(0,)]


def _as_before_read_seqs(target: str, backend: str) -> None:
    """Put a store's reads back in the shape before `read_items` named a read by its
    seq (the handle in every row), and forget that the change was applied."""
    name = "0027_read_items_by_seq" if backend == "sqlite" else "0026_read_items_by_seq"
    (created,) = [sql for step, sql in migrations(backend) if step.endswith("_reads")]
    steps = [
        "CREATE TEMP TABLE kept_reads AS"
        " SELECT id, scope_id, at, concepts, model, vector, rated_at FROM reads",
        "CREATE TEMP TABLE kept_items AS SELECT r.id AS read_id, i.memory_seq"
        " FROM read_items i JOIN reads r ON r.seq = i.read_seq",
        "CREATE TEMP TABLE kept_lessons AS SELECT * FROM read_lessons",
        "DROP TABLE read_items", "DROP TABLE read_lessons", "DROP TABLE reads",
        created,
        "INSERT INTO reads SELECT * FROM kept_reads",
        "INSERT INTO read_items SELECT * FROM kept_items",
        "INSERT INTO read_lessons SELECT * FROM kept_lessons",
        f"DELETE FROM schema_migrations WHERE name = '{name}'",
    ]  # fmt: skip
    if backend == "sqlite":
        conn = sqlite3.connect(target)
        conn.executescript(";\n".join(steps))
        conn.close()
        return
    import psycopg

    with psycopg.connect(target) as pg:
        for sql in steps:
            pg.execute(sql.encode())


def test_reads_kept_before_their_items_named_them_by_seq_still_rate_and_forget(
    store_target: Target, backend: str
) -> None:
    target = store_target("renamed")
    with Memory(target, agent_id="ops") as mem:
        ids = _notes(mem)
        rated, forgotten = mem.read(ASKED[0], k=5), mem.read(SYMPTOMS[0], k=3)
        mem.feedback([ids[FIX]], 1.0, read=rated.id)
    _as_before_read_seqs(target, backend)
    with Memory(target, agent_id="ops") as mem:
        both = f"SELECT COUNT(*) FROM reads WHERE id IN ('{rated.id}', '{forgotten.id}')"
        assert raw_query(target, both) == [(2,)]
        assert mem.read(ASKED[0], k=5).items[0].id == ids[FIX]  # what it was taught holds
        assert mem.feedback([ids[FIX]], 1.0, read=rated.id).lessons_updated
        mem.forget(ids=[forgotten.items[-1].id])
        with pytest.raises(UnknownRead):  # unrated: only its items tie it to what went
            mem.feedback([ids[FIX]], 1.0, read=forgotten.id)
    assert raw_query(
        target, "SELECT COUNT(*) FROM read_items WHERE read_seq NOT IN (SELECT seq FROM reads)"
    ) == [(0,)]


# -- precedents: by meaning ------------------------------------------------------------


def test_a_question_in_other_words_finds_what_a_rated_read_was_taught(store_target: Target) -> None:
    with Memory(store_target("meaning"), agent_id="ops", embedder=SYNONYMS) as mem:
        ids = _notes(mem)
        assert _rank(mem, OTHER_WORDS, ids[FIX]) is None
        asked = mem.read(ASKED[0], k=5)
        mem.feedback([ids[FIX]], 1.0, read=asked.id)
        found = {item.id: item for item in mem.read(OTHER_WORDS, k=5).items}
        assert ids[FIX] in found
        item = found[ids[FIX]]
        assert "learned" not in item.sources  # no word of the question was taught
        assert item.sources["precedent"] == 1
        assert item.via[0].concept == f"read:{asked.id}"
        assert set(item.via[0].path) == set(asked.query_concepts)


def test_what_precedents_taught_survives_a_restart(store_target: Target) -> None:
    target = store_target("restart")
    with Memory(target, agent_id="ops", embedder=SYNONYMS) as mem:
        ids = _notes(mem)
        mem.feedback([ids[FIX]], 1.0, read=mem.read(ASKED[0], k=5).id)
    with Memory(target, agent_id="ops", embedder=SYNONYMS) as fresh:
        assert _rank(fresh, OTHER_WORDS, ids[FIX]) is not None
    with Memory(target, agent_id="other", embedder=SYNONYMS) as other:
        _notes(other)
        assert all("precedent" not in i.sources for i in other.read(OTHER_WORDS, k=5).items)


def test_a_minority_of_wrong_ratings_is_outvoted(store_target: Target) -> None:
    with Memory(store_target("noisy"), agent_id="ops", embedder=SYNONYMS) as mem:
        ids = _notes(mem)
        for question in ASKED[:3]:
            mem.feedback([ids[FIX]], 1.0, read=mem.read(question, k=5).id)
        mem.feedback([ids[WRONG]], 1.0, read=mem.read(ASKED[3], k=5).id)
        found = {item.id: item for item in mem.read(OTHER_WORDS, k=10).items}
        assert found[ids[FIX]].sources["precedent"] == 1
        wrong = found.get(ids[WRONG])
        assert wrong is None or "precedent" not in wrong.sources


# Two questions about the garden: all but the same question, far from the cramps.
GARDEN = ["Hose leaking on the tomato beds?", "Hose leaking on the tomato beds again?"]


def test_a_precedent_counts_less_where_questions_as_near_were_answered_apart(
    store_target: Target,
) -> None:
    parts = {}
    for alike in (True, False):
        with Memory(store_target(f"alike-{alike}"), agent_id="ops", embedder=SYNONYMS) as mem:
            ids = _notes(mem)
            chatter = [i for t, i in ids.items() if t.startswith("Note ")]
            mem.feedback([ids[FIX]], 1.0, read=mem.read(ASKED[0], k=5).id)
            answers = chatter[:1] * 2 if alike else chatter[:2]
            for question, answer in zip(GARDEN, answers, strict=True):
                mem.feedback([answer], 1.0, read=mem.read(question, k=5).id)
            found = {i.id: i for i in mem.read(OTHER_WORDS, k=5).items}
            parts[alike] = found[ids[FIX]].parts["precedent"]
    # Each consulted precedent's nearest one answered apart: answered alike, the
    # garden questions are apart only from the cramp one, far from each, so the
    # question sits nearer its voter than all three: (3 + 1) / (3 + 2). Answered
    # apart, the garden pair sits nearer each other than the question sits to the
    # cramp precedent, so it is nearer than one of three: (1 + 1) / (3 + 2).
    assert parts[True] / parts[False] == pytest.approx(2.0)


def test_what_a_process_kept_up_to_date_reads_as_a_fresh_process_does(
    store_target: Target,
) -> None:
    target = store_target("kept")
    rng = random.Random(3)
    words = "jog run sprint far long calm relax office work leg calf cramp spasm cure".split()
    with Memory(target, agent_id="ops", embedder=SYNONYMS) as mem:
        ids = list(_notes(mem).values())
        # Rated one by one, each rating read straight after: the process keeps its
        # rated reads up to date where a fresh one measures them whole, and the
        # hashed senses tie often, so a nearest question must not hang on row order.
        for n in range(120):
            asked = mem.read(" ".join(rng.sample(words, 3)), k=5)
            mem.feedback([ids[40 + rng.randrange(5)]], 1.0, read=asked.id)
            mem.read(OTHER_WORDS, k=5)
            if n == 60:
                mem.forget(ids=[ids[44]])  # its reads go with it: measured whole again
                ids[44] = ids[40]
        questions = [" ".join(rng.sample(words, 3)) for _ in range(12)]
        kept = [_scores(mem, q) for q in questions]
    with Memory(target, agent_id="ops", embedder=SYNONYMS) as fresh:
        assert [_scores(fresh, q) for q in questions] == kept


def _scores(mem: Memory, question: str) -> list[tuple[str, dict[str, float]]]:
    """A read's ids and score parts at one moment, so decay moves nothing between calls."""
    return [(i.id, i.parts) for i in mem.read(question, k=10, as_of=AS_OF).items]


def test_precedents_speak_for_what_the_question_s_words_leave_open(
    store_target: Target,
) -> None:
    with Memory(store_target("open"), agent_id="ops", embedder=SYNONYMS) as mem:
        ids = _notes(mem)
        mem.feedback([ids[FIX]], 1.0, read=mem.read(ASKED[0], k=5).id)
        # The same senses in words the symptom notes hold: as near the rated read,
        # but the words find much of it, so the precedent's vote is smaller.
        same_words = "Legs cramp following a far jog: fix?"
        in_words = {i.id: i for i in mem.read(same_words, k=10).items}[ids[FIX]]
        otherwise = {i.id: i for i in mem.read(OTHER_WORDS, k=10).items}[ids[FIX]]
        assert 0 < in_words.parts["precedent"] < otherwise.parts["precedent"]


def test_a_harmful_rating_from_a_similar_question_takes_it_out_again(store_target: Target) -> None:
    with Memory(store_target("harmful"), agent_id="ops", embedder=SYNONYMS) as mem:
        ids = _notes(mem)
        mem.feedback([ids[WRONG]], 1.0, read=mem.read(ASKED[0], k=5).id)
        assert _rank(mem, OTHER_WORDS, ids[WRONG]) is not None
        mem.feedback([ids[WRONG]], -1.0, read=mem.read(ASKED[1], k=5).id)
        after = {item.id: item for item in mem.read(OTHER_WORDS, k=10).items}
        wrong = after.get(ids[WRONG])
        assert wrong is None or "precedent" not in wrong.sources


def test_without_an_embedder_a_read_has_no_precedent_arm(store_target: Target) -> None:
    with Memory(store_target("plain"), agent_id="ops") as mem:
        ids = _notes(mem)
        mem.feedback([ids[FIX]], 1.0, read=mem.read(ASKED[0], k=5).id)
        result = mem.read(OTHER_WORDS, k=5)
        assert not result.arms["precedent"]
        assert ids[FIX] not in [item.id for item in result.items]


def test_precedents_move_with_an_export_and_import_once(store_target: Target) -> None:
    source, target = store_target("exported"), store_target("imported")
    with Memory(source, agent_id="ops", embedder=SYNONYMS) as mem:
        ids = _notes(mem)
        asked = mem.read(ASKED[0], k=5)
        mem.feedback([ids[FIX]], 1.0, read=asked.id)
        lines = list(mem.export_all())
    precedent = [line for line in lines if line.get("line") == "precedent"]
    assert [line["read"] for line in precedent] == [asked.id]
    assert precedent[0]["taught"] == [{"memory": ids[FIX], "weight": 1.0, "outcomes": 1}]
    with Memory(target, agent_id="ops", embedder=SYNONYMS) as copy:
        assert copy.import_lines(lines).imported["precedent"] == 1
        assert copy.import_lines(lines).imported["precedent"] == 1  # the same state again
        found = {item.id: item for item in copy.read(OTHER_WORDS, k=5).items}
        assert found[ids[FIX]].sources["precedent"] == 1
        rated = copy.feedback([ids[FIX]], 1.0, read=asked.id)  # the handle moved too
        assert rated.lessons_updated == len(asked.query_concepts)


def test_a_malformed_precedent_line_is_refused_naming_its_field(store_target: Target) -> None:
    taught = [{"memory": "01X", "weight": 1.0, "outcomes": 1}]
    good = {"line": "precedent", "read": "01READ", "concepts": ["leg"], "model": "m",
            "vector": "AACAPw==", "taught": taught}  # fmt: skip
    bad = [{**good, "vector": "not base64!"}, {**good, "vector": "AAA="},
           {**good, "taught": []}, {**good, "read": "../x"}, {**good, "extra": 1}]  # fmt: skip
    with Memory(store_target("malformed"), agent_id="ops") as mem:
        report = mem.import_lines(bad, first_line=1)
        assert [(p.line, p.field) for p in report.errors] == [
            (1, "vector"), (2, "vector"), (3, "taught"), (4, "read"), (5, "extra")]  # fmt: skip
