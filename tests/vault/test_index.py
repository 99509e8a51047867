"""Indexing a vault: what becomes memories and links, what is skipped, what a re-index reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assocmem import InvalidInput, Memory, NotFound

pytestmark = pytest.mark.usefixtures("backend")


def test_the_sample_vault_indexes_with_links_resolved_by_name_alias_heading_and_label(
    memory: Memory, vault: Path
) -> None:
    report = memory.vault_index(str(vault))
    assert (report.notes, report.read, report.added, report.removed) == (18, 18, 18, 0)
    assert report.skipped == {}
    status = memory.index_status()
    assert status.root == str(vault.resolve())
    assert status.folders == {"": 1, "cooking": 2, "decisions": 6, "habits": 4, "learning": 5}
    assert status.dead_links == 2
    traversal = Memory.attached(memory._store, memory._vault).traverse(
        "learning/Deliberate Practice"
    )
    linked = {r.object for r in traversal.relations if r.subject == "learning/Deliberate Practice"}
    # [[Desirable Difficulty]] by name, [[Retrieval Practice#Why it works|testing yourself]]
    # through a heading and a label.
    assert linked == {"learning/Desirable Difficulty", "learning/Retrieval Practice"}


def test_an_alias_and_a_markdown_link_resolve(memory: Memory, vault: Path) -> None:
    (vault / "habits" / "Alias User.md").write_text(
        "# Alias User\n\nSee [[SRS]] and [two-way](../decisions/Reversible%20Decisions.md).\n"
    )
    memory.vault_index(str(vault))
    resolved = {k.target: k.resolved for k in memory._store.vault_links(memory._vault)
                if k.source == "habits/Alias User.md"}  # fmt: skip
    assert resolved == {
        "SRS": "learning/Spaced Repetition.md",
        "../decisions/Reversible%20Decisions.md": "decisions/Reversible Decisions.md",
    }


def test_vault_chunks_stay_out_of_ordinary_reads_and_ordinary_memories_out_of_vault_tools(
    memory: Memory, vault: Path
) -> None:
    memory.write("feedback latency in the deploy pipeline is ten minutes")
    memory.vault_index(str(vault))
    plain = memory.read("feedback latency")
    assert [i.record.text for i in plain.items] == [
        "feedback latency in the deploy pipeline is ten minutes"
    ]
    notes = memory.relevant_notes("feedback latency", k=5)
    assert notes and all(h.note.endswith(".md") for h in notes)
    assert notes[0].note in {"learning/Deliberate Practice.md", "habits/Habit Loops.md"}
    assert notes[0].line >= 1 and "eedback" in notes[0].excerpt


def test_a_symlink_out_of_the_vault_and_a_symlinked_folder_are_not_followed(
    memory: Memory, vault: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "Passwords.md").write_text("# Passwords\n\nhunter2 is the root password.\n")
    (vault / "learning" / "Leak.md").symlink_to(outside / "Passwords.md")
    (vault / "linked").symlink_to(outside, target_is_directory=True)
    report = memory.vault_index(str(vault))
    assert report.skipped == {
        "learning/Leak.md": "a link (links are never followed)",
        "linked": "a link (links are never followed)",
    }
    assert report.notes == 18
    assert memory.relevant_notes("hunter2 root password") == [] or all(
        "hunter2" not in h.excerpt for h in memory.relevant_notes("hunter2 root password")
    )


def test_a_note_over_the_size_cap_is_skipped_and_reported(memory: Memory, vault: Path) -> None:
    (vault / "learning" / "Dump.md").write_bytes(b"# Dump\n\n" + b"word " * 600_000)  # 3 MB
    report = memory.vault_index(str(vault))
    assert list(report.skipped) == ["learning/Dump.md"]
    assert report.skipped["learning/Dump.md"].startswith("too large: 3000008 bytes")
    assert memory.index_status().notes == 18


def test_a_reindex_reads_only_what_changed_and_forgets_what_went(
    memory: Memory, vault: Path
) -> None:
    memory.vault_index(str(vault))
    unchanged = memory.vault_index()
    assert (unchanged.read, unchanged.added, unchanged.changed, unchanged.removed) == (0, 0, 0, 0)
    note = vault / "habits" / "Streaks.md"
    note.write_text(note.read_text() + "\nA streak of kettlebells is the goal.\n")
    edited = memory.vault_index()
    assert (edited.read, edited.changed, edited.added, edited.chunks) == (1, 1, 0, 1)
    assert memory.relevant_notes("kettlebells")[0].note == "habits/Streaks.md"
    touched = vault / "habits" / "Habit Loops.md"
    os.utime(touched, ns=(1, 1))  # a new stat, the same bytes: read, not re-parsed
    retouched = memory.vault_index()
    assert (retouched.read, retouched.changed, retouched.chunks) == (1, 0, 0)
    ids = next(r.memory_ids for r in memory._store.vault_notes(memory._vault)
               if r.path == "habits/Streaks.md")  # fmt: skip
    note.unlink()
    gone = memory.vault_index()
    assert (gone.read, gone.removed, gone.notes) == (0, 1, 17)
    assert memory._store.records(memory._vault, list(ids)) == []
    assert all(k.source != "habits/Streaks.md" for k in memory._store.vault_links(memory._vault))
    # The index note's link to it is dead now, in the table and in the graph.
    dead = {(k.source, k.target) for k in memory.maintenance_report().dead_links}
    assert ("habits/Habits Index.md", "Streaks") in dead
    graph = Memory.attached(memory._store, memory._vault)
    with pytest.raises(NotFound):
        graph.traverse("habits/Streaks")


def test_a_path_that_is_not_a_folder_or_no_path_at_all_is_refused(
    memory: Memory, tmp_path: Path
) -> None:
    with pytest.raises(InvalidInput) as no_path:
        memory.vault_index()
    assert no_path.value.field == "path"
    with pytest.raises(InvalidInput) as missing:
        memory.vault_index(str(tmp_path / "nowhere"))
    assert missing.value.field == "path"
    assert memory.index_status().root is None


def test_a_note_created_later_revives_the_links_to_it(memory: Memory, vault: Path) -> None:
    memory.vault_index(str(vault))
    (vault / "learning" / "Cognitive Load.md").write_text(
        "# Cognitive Load\n\nWorking memory is small.\n"
    )
    report = memory.vault_index()
    assert (report.added, report.relinked) == (1, 1)
    dead = {d.target for d in memory.maintenance_report().dead_links}
    assert dead == {"Opportunity Cost"}
    graph = Memory.attached(memory._store, memory._vault).traverse("learning/Cognitive Load")
    assert {(r.subject, r.object) for r in graph.relations} == {
        ("learning/Desirable Difficulty", "learning/Cognitive Load")
    }
