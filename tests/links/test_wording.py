"""Results show concepts as people wrote them, never their stems: a read's query and
expanded concepts, its via paths and explanations, graph(), and the demo, on both
backends. Each shown word stems back to its concept, so it can be passed back; a word
is read from the reader's own layers only."""

from __future__ import annotations

import subprocess
import sys

import pytest

from assocmem import Memory
from assocmem.adapters import cli
from assocmem.links import wording
from assocmem.text.concepts import normalize_concept
from tests.conftest import Target
from tests.store.test_statements import counted

NOTES = (
    "The request hit a timeout, retrying",
    "Another timeout, retrying again",
    "Retrying with backoff worked",  # reached from a timeout only through "retrying"
)


def test_a_read_shows_the_words_written_not_their_stems(mem: Memory) -> None:
    for text in NOTES:
        mem.write(text)
    result = mem.read(concepts=["timeouts"])
    assert result.query_concepts == ("timeout",)
    assert result.expanded_concepts["retrying"] == 2 and "retri" not in result.expanded_concepts
    reached = next(item for item in result.items if item.source == "hebbian_retrieval")
    assert reached.text == NOTES[2]
    assert [(v.concept, v.path) for v in reached.via] == [("retrying", ("timeout", "retrying"))]
    assert reached.why == "linked to the question's concepts by retrying"


def test_graph_shows_the_words_written(mem: Memory) -> None:
    for text in NOTES:
        mem.write(text)
    graph = mem.graph(["retry"])
    assert graph.concepts == ("retrying",)
    edges = {(e.source, e.target): e.count for e in graph.edges}
    assert edges[("retrying", "timeout")] == 2 and edges[("retrying", "backoff")] == 1
    assert "retri" not in {end for pair in edges for end in pair}


def test_what_a_read_shows_can_be_passed_back(mem: Memory) -> None:
    for text in NOTES:
        mem.write(text)
    result = mem.read(concepts=["timeout"])
    shown = [*result.query_concepts, *result.expanded_concepts]
    known = mem._store.concept_ids([normalize_concept(word) for word in shown])
    assert len(known) == len(shown)  # each word stems back to a concept of the store
    reached = [item.id for item in result.items if item.text == NOTES[2]]
    mem.feedback(reached, 1.0, query_concepts=shown)
    # The words named the concepts: the link the read showed moved.
    edges = {(e.source, e.target): e.weight for e in mem.graph(["retrying"]).edges}
    assert edges[("retrying", "backoff")] == 2.0
    assert mem.graph(list(result.expanded_concepts)).concepts == tuple(result.expanded_concepts)


def test_the_feedback_log_shows_the_words_written(mem: Memory) -> None:
    for text in NOTES:
        mem.write(text)
    rated = next(item.id for item in mem.read(concepts=["timeout"]).items)
    mem.feedback([rated], 1.0, query_concepts=["retries", "backoffs"])  # logged as stems
    shown = ("retrying", "backoff")
    assert mem.inspect(rated).feedback[0].query_concepts == shown
    assert mem.health().recent_feedback[0].query_concepts == shown
    assert mem.feedback_log().items[0].query_concepts == shown


def test_a_stem_never_written_shows_itself(mem: Memory) -> None:
    mem.write("a release note", concepts=["releases"])
    assert mem.graph(["retries"]).concepts == ("retri",)  # asked, never written
    assert mem.read(concepts=["releasing"]).query_concepts == ("releases",)  # written


def test_the_word_written_most_is_shown(mem: Memory) -> None:
    mem.write_many([{"text": f"note {n}", "concepts": ["retried", "queue"]} for n in range(3)])
    mem.write_many([{"text": f"other {n}", "concepts": ["Retries", "queue"]} for n in range(2)])
    assert mem.read(concepts=["queue"]).expanded_concepts == {"retried": 5}
    mem.write_many([{"text": f"more {n}", "concepts": ["retries", "queue"]} for n in range(2)])
    # Spellings that differ in case count together: retries (2) and Retries (2) outweigh
    # retried (3), and the lower-case spelling wins their tie.
    assert mem.read(concepts=["queue"]).expanded_concepts == {"retries": 7}


def test_a_tenant_never_sees_another_tenants_wording(store_target: Target) -> None:
    target = store_target()
    with (
        Memory(target, agent_id="alice") as alice,
        Memory(target, agent_id="bob") as bob,
        Memory(target, agent_id="alice", project_id="secret") as hidden,
    ):
        for n in range(3):
            alice.write(f"note {n}", concepts=["timeout", "retrying"])
        for n in range(5):
            bob.write(f"note {n}", concepts=["timeout", "retried"])
            hidden.write(f"note {n}", concepts=["timeout", "retries"])
        assert alice.read(concepts=["timeout"]).expanded_concepts == {"retrying": 3}
        assert bob.read(concepts=["timeout"]).expanded_concepts == {"retried": 5}
        assert alice.graph(["retri"]).concepts == ("retrying",)
        assert bob.graph(["retri"]).concepts == ("retried",)
        # The project reads alice's global pool too; alice's own view never sees it.
        assert hidden.graph(["retri"]).concepts == ("retries",)


def test_the_spellings_of_many_stems_are_one_statement(mem: Memory) -> None:
    mem.write_many([{"text": f"note {n}", "concepts": ["retrying", f"topic{n}"]} for n in range(9)])
    store = mem._store
    stems = store.concept_ids(["retri", *(f"topic{n}" for n in range(9))])
    with counted(mem) as sent:
        forms = store.concept_forms(mem.scope, sorted(stems.values()), wording.USES_COUNTED)
    assert len([s for s in sent if "memory_concepts" in s]) == 1
    assert forms[stems["retri"]] == {"retrying": 9}
    assert all(forms[stems[f"topic{n}"]] == {f"topic{n}": 1} for n in range(9))


@pytest.mark.parametrize(
    ("counts", "shown"),
    [
        ({}, "retri"),
        ({"retrying": 2, "retried": 1}, "retrying"),
        ({"Retried": 2, "retried": 2}, "retried"),
        ({"Retried": 3, "retried": 1, "retrying": 3}, "Retried"),
        ({"  retrying  with ": 4, "retried": 1}, "retried"),  # a phrase is another stem
        ({"timeouts": 9, "retried": 1}, "retried"),  # never a spelling of another stem
    ],
)
def test_word_picks_a_spelling_that_stems_back(counts: dict[str, int], shown: str) -> None:
    assert wording.word("retri", counts) == shown
    assert normalize_concept(shown) == "retri"


def test_the_demo_prints_the_words_written() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assocmem", "demo"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "links add: retry(4), backoff(2)" in done.stdout
    assert "[via retry]" in done.stdout and "hold retry(4), backoff(2)" in done.stdout
    assert "retri(" not in done.stdout and "retri," not in done.stdout


def test_the_command_line_prints_the_words_written(
    capsys: pytest.CaptureFixture[str], db_path: str
) -> None:
    for text in NOTES:
        assert cli.main(["--db", db_path, "--agent", "ops", "write", text]) == 0
    capsys.readouterr()
    assert cli.main(["--db", db_path, "--agent", "ops", "read", "-c", "timeouts"]) == 0
    printed = capsys.readouterr().out
    assert " asked: timeout | links add: retrying(2)" in printed
    assert f"{NOTES[2]}  [via retrying]" in printed
    assert cli.main(["--db", db_path, "--agent", "ops", "graph", "retry"]) == 0
    assert "retrying — timeout  weight 2" in capsys.readouterr().out
