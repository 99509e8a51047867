"""What the vault adds to `Memory`: a folder of Markdown notes indexed into a scope of
its own, with the thinking and maintenance tools (the vault/ room).

Invariant: only `vault_index` and `apply_links` touch the disk, and only under the
roots this memory allows.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from assocmem.errors import InvalidInput, PathRefused
from assocmem.operations.base import Declaration, MemoryBase, checked_arguments
from assocmem.types import Scope
from assocmem.vault import index, maintain, tools
from assocmem.vault.types import (
    AppliedLinks,
    Bridge,
    Claim,
    CoverageGap,
    Gaps,
    IdeaMethod,
    IndexReport,
    IndexStatus,
    MaintenanceReport,
    NoteHit,
)


class VaultOperations(MemoryBase):
    """The vault's operations: a folder of Markdown notes as a second brain (mixed into
    `Memory`)."""

    # The registry's facts of this group's operations (`surface.py`).
    declared: ClassVar[dict[str, Declaration]] = {
        # -- the vault (vault/ room) --
        "vault_index": Declaration(True, ("path",)),
        "index_status": Declaration(False),
        "relevant_notes": Declaration(False, ("query",)),
        "coverage_gap": Declaration(False, ("query",)),
        "find_gaps": Declaration(False),
        "bridge_candidates": Declaration(False, ("note",)),
        "extract_claims": Declaration(False, ("note",)),
        "idea_methods": Declaration(False),
        "maintenance_report": Declaration(False),
        "apply_links": Declaration(True, ("notes",)),
    }

    @checked_arguments()
    def vault_index(self, path: str | None = None) -> IndexReport:
        """Index a folder of Markdown notes (or re-index the one indexed before).

        Only notes whose content changed are re-read; deleted notes leave with their
        memories and links. Symlinks are never followed and notes over 2 MiB are
        skipped (reported in ``skipped``). The chunks are memories of the vault's own
        scope (channel ``vault``), so ordinary reads never see them.
        """
        root = self._vault_root(path)
        return index.index(self._store, self._vault, root, self._space)

    def index_status(self) -> IndexStatus:
        """The indexed vault: its folder, notes, chunks, links, dead links and folder spread."""
        return tools.index_status(self._store, self._vault)

    @checked_arguments()
    def relevant_notes(self, query: str, k: int = 5) -> list[NoteHit]:
        """The notes most relevant to a question (relevance × accrued value), with excerpts."""
        return tools.relevant_notes(self._store, self._vault, self._space, query, k)

    @checked_arguments()
    def coverage_gap(self, query: str, k: int = 5) -> CoverageGap:
        """What the vault covers of a question: top notes, a completeness score and the
        question's terms no note supports."""
        return tools.coverage_gap(self._store, self._vault, self._space, query, k)

    def find_gaps(self) -> Gaps:
        """Where the note network is blind: isolated and under-linked notes, thin folders."""
        return tools.find_gaps(self._store, self._vault)

    @checked_arguments()
    def bridge_candidates(self, note: str, k: int = 5) -> list[Bridge]:
        """Notes in other folders, not linked to ``note``, close in meaning, with the reason."""
        return tools.bridge_candidates(self._store, self._vault, self._space, note, k)

    @checked_arguments()
    def extract_claims(self, note: str) -> list[Claim]:
        """Claim-like sentences of a note, with line numbers, to ground or challenge."""
        return tools.extract_claims(self._store, self._vault, note)

    def idea_methods(self) -> list[IdeaMethod]:
        """A small toolkit of named idea-generation recipes, as data."""
        return tools.idea_methods()

    @checked_arguments()
    def maintenance_report(self, stale_days: int = 365) -> MaintenanceReport:
        """The vault's chores: dead links, orphans with a note to link each to, stale
        notes (by frontmatter date), near-duplicates, a health score and archive candidates."""
        return maintain.report(self._store, self._vault, self._space, stale_days, maintain.today())

    @checked_arguments()
    def apply_links(self, notes: Sequence[str] | None = None, dry_run: bool = True) -> AppliedLinks:
        """Append a marked ``## Related (suggested)`` block of links to the orphans (or
        the named notes). A dry run (the default) returns the plan and writes nothing;
        a re-run replaces its own block, and nothing else in a note ever changes."""
        remembered = self._store.vault_root(self._vault)
        if remembered is None:
            raise InvalidInput("no vault is indexed here: call vault_index first", field="notes")
        root = self._vault_root(remembered)
        return maintain.apply_links(self._store, self._vault, self._space, root, notes, dry_run)

    @property
    def _vault(self) -> Scope:
        return index.vault_scope(self.scope)

    def _vault_root(self, path: str | None) -> Path:
        """The folder to index: ``path`` or the remembered one, resolved, allowed here."""
        if path is None:
            path = self._store.vault_root(self._vault)
            if path is None:
                raise InvalidInput("no vault is indexed here yet: give its path", field="path")
        if not isinstance(path, str) or not path.strip():
            raise InvalidInput("path must name a folder", field="path")
        try:
            root = Path(path).expanduser().resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            raise InvalidInput(f"path {path!r} cannot be resolved", field="path") from exc
        allowed = self._vault_roots
        if allowed is not None and not any(root.is_relative_to(a) for a in allowed):
            raise PathRefused(
                "this memory may index only folders under its vault roots"
                + ("" if allowed else " (none are configured: pass --vault-root)")
            )
        try:
            is_folder = root.is_dir()
        except OSError:
            is_folder = False
        if not is_folder:
            raise InvalidInput(f"path {path!r} is not a folder", field="path")
        return root


def resolved_roots(roots: Sequence[str] | None) -> tuple[Path, ...] | None:
    if roots is None:
        return None
    if isinstance(roots, str):
        raise InvalidInput("vault_roots must be a list of folders", field="vault_roots")
    return tuple(Path(r).expanduser().resolve() for r in roots)
