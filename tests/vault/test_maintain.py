"""Maintenance: the report's findings, and apply_links' additive, idempotent fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assocmem import InvalidInput, Memory
from tests.vault.conftest import files

pytestmark = pytest.mark.usefixtures("backend")


def test_the_report_finds_dead_links_orphans_duplicates_and_health(
    memory: Memory, vault: Path
) -> None:
    memory.vault_index(str(vault))
    report = memory.maintenance_report()
    assert {(d.source, d.target) for d in report.dead_links} == {
        ("decisions/Reversible Decisions.md", "Opportunity Cost"),
        ("learning/Desirable Difficulty.md", "Cognitive Load"),
    }
    assert {o.note: o.suggested for o in report.orphans} == {
        "cooking/Bread Hydration.md": "cooking/Sourdough Starter.md",
        "cooking/Sourdough Starter.md": "cooking/Bread Hydration.md",
    }
    assert report.duplicates == (("decisions/Pre-Mortem.md", "decisions/Premortem Checklist.md"),)
    assert (report.giant_component, report.health) == (16, round(16 / 18, 4))
    assert set(report.archive_candidates) == {
        "cooking/Bread Hydration.md",
        "cooking/Sourdough Starter.md",
    }


def test_staleness_follows_the_frontmatter_date_not_the_file_mtime(
    memory: Memory, vault: Path
) -> None:
    os.utime(vault / "habits" / "Habit Loops.md", (0, 0))  # 1970 on disk, dated 2026
    (vault / "cooking" / "Sourdough Starter.md").touch()  # today on disk, dated 2019
    memory.vault_index(str(vault))
    stale = {s.note for s in memory.maintenance_report(stale_days=3650).stale}
    assert stale == set()
    stale = {s.note: s.dated for s in memory.maintenance_report(stale_days=2000).stale}
    assert stale == {"cooking/Sourdough Starter.md": "2019-04-02"}
    with pytest.raises(InvalidInput) as bad:
        memory.maintenance_report(stale_days=-1)
    assert bad.value.field == "stale_days"


def test_a_dry_run_writes_nothing(memory: Memory, vault: Path) -> None:
    memory.vault_index(str(vault))
    before = files(vault)
    plan = memory.apply_links()
    assert plan.dry_run and plan.written == 0 and plan.index is None
    assert [p.note for p in plan.plans] == ["cooking/Bread Hydration.md",
                                            "cooking/Sourdough Starter.md"]  # fmt: skip
    assert all(p.changes for p in plan.plans)
    assert files(vault) == before


def test_apply_links_reconnects_the_orphans_additively_and_a_second_apply_changes_no_byte(
    memory: Memory, vault: Path
) -> None:
    memory.vault_index(str(vault))
    health = memory.maintenance_report().health
    before = files(vault)
    applied = memory.apply_links(dry_run=False)
    assert applied.written == 2 and applied.index is not None and applied.index.changed == 2
    after = files(vault)
    assert set(after) == set(before)  # no file created, moved or deleted
    changed = {p for p in before if before[p] != after[p]}
    assert changed == {"cooking/Bread Hydration.md", "cooking/Sourdough Starter.md"}
    for path in changed:
        assert after[path].startswith(before[path])  # additive: every old byte kept
        assert b"\n## Related (suggested)\n" in after[path][len(before[path]) :]
    report = memory.maintenance_report()
    assert report.orphans == () and report.health > health
    again = memory.apply_links(dry_run=False)
    named = memory.apply_links(["Sourdough Starter"], dry_run=False)
    assert (again.written, named.written) == (0, 0)
    assert named.plans[0].changes is False
    assert files(vault) == after


def test_a_block_whose_link_went_dead_is_replaced_in_place(memory: Memory, vault: Path) -> None:
    memory.vault_index(str(vault))
    memory.apply_links(dry_run=False)
    note = vault / "cooking" / "Bread Hydration.md"
    text = note.read_text()
    note.write_text(text.replace("[[cooking/Sourdough Starter]]", "[[cooking/Gone]]") + "tail\n")
    memory.vault_index()
    memory.apply_links(["Bread Hydration"], dry_run=False)
    rewritten = note.read_text()
    assert rewritten.count("## Related (suggested)") == 1
    assert "[[cooking/Gone]]" not in rewritten and rewritten.endswith("tail\n")


def test_apply_links_needs_an_indexed_vault(memory: Memory) -> None:
    with pytest.raises(InvalidInput):
        memory.apply_links()
