"""The thinking tools over the sample vault: relevance, coverage, gaps, bridges, claims."""

from __future__ import annotations

from pathlib import Path

import pytest

from assocmem import Memory, NotFound

pytestmark = pytest.mark.usefixtures("backend")


@pytest.fixture
def indexed(memory: Memory, vault: Path) -> Memory:
    memory.vault_index(str(vault))
    return memory


def test_relevant_notes_rank_by_relevance_times_accrued_value(indexed: Memory) -> None:
    hits = indexed.relevant_notes("how does feedback speed up learning", k=3)
    assert hits[0].note == "learning/Deliberate Practice.md"
    assert hits[0].relevance == 1.0 and hits[0].value == 1.0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # Value accrues with use: a helpful rating of a lower note's chunk lifts its value.
    second = hits[1]
    record = next(r for r in indexed._store.records(indexed._vault, _ids(indexed, second.note)))
    Memory.attached(indexed._store, indexed._vault).feedback([record.id], 1.0, query_concepts=[])
    again = {h.note: h for h in indexed.relevant_notes("how does feedback speed up learning", k=3)}
    assert again[second.note].value > 1.0


def _ids(memory: Memory, note: str) -> list[str]:
    return [
        i for r in memory._store.vault_notes(memory._vault) if r.path == note for i in r.memory_ids
    ]


def test_coverage_gap_names_the_terms_no_note_supports(indexed: Memory) -> None:
    gap = indexed.coverage_gap("feedback latency and sleep quality")
    assert gap.terms == ("feedback", "latency", "sleep", "quality")
    assert gap.missing == ("sleep", "quality")
    assert gap.completeness == 0.5
    assert gap.notes[0].note in {"learning/Deliberate Practice.md", "habits/Habit Loops.md"}


def test_find_gaps(indexed: Memory) -> None:
    gaps = indexed.find_gaps()
    assert gaps.isolated == ("cooking/Bread Hydration.md", "cooking/Sourdough Starter.md")
    assert "decisions/Premortem Checklist.md" in gaps.under_linked
    assert gaps.thin_folders == {"": 1, "cooking": 2}


def test_a_bridge_is_found_across_two_folders_with_its_reason(indexed: Memory) -> None:
    bridges = indexed.bridge_candidates("Deliberate Practice")
    assert bridges[0].note == "habits/Habit Loops.md"
    assert "latency" in bridges[0].shared and "latency" in bridges[0].reason
    assert all(b.folder != "learning" for b in bridges)
    linked = {"learning/Desirable Difficulty.md", "learning/Retrieval Practice.md",
              "learning/Learning Index.md"}  # fmt: skip
    assert not linked & {b.note for b in bridges}


def test_extract_claims_returns_sentences_with_their_lines(indexed: Memory, vault: Path) -> None:
    claims = indexed.extract_claims("Practice on purpose")  # by alias
    lines = (vault / "learning" / "Deliberate Practice.md").read_text().splitlines()
    assert claims[0].text.startswith("Feedback latency is the hidden variable")
    for claim in claims:
        assert claim.text.split()[0] in lines[claim.line - 1]
    with pytest.raises(NotFound):
        indexed.extract_claims("No Such Note")


def test_idea_methods_are_a_named_toolkit(indexed: Memory) -> None:
    methods = indexed.idea_methods()
    assert len(methods) == 10 and methods[0].name == "Hidden-Connection Bridge"
    tools = {t for m in methods for t in m.tools}
    assert tools <= {"bridge_candidates", "extract_claims", "find_gaps", "relevant_notes",
                     "coverage_gap", "maintenance_report"}  # fmt: skip
