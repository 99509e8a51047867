"""The everyday comforts of `Memory`: update a memory by id, and move a whole store
out and back in (`export_all`, `import_lines`).

Invariant: each operation changes only what the caller could write itself: its own
agent's memories, in a scope it reads; an id it cannot read is `UnknownMemory`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from assocmem.errors import InvalidInput, UnknownMemory
from assocmem.operations.base import Declaration, MemoryBase, checked_arguments
from assocmem.portable import transfer
from assocmem.portable.types import ImportReport
from assocmem.types import STATUSES, Record
from assocmem.write import validate


class ComfortOperations(MemoryBase):
    """Update, export and import (mixed into `Memory`)."""

    # The registry's facts of this group's operations (`surface.py`).
    declared: ClassVar[dict[str, Declaration]] = {
        # -- comforts: update, export and import --
        "update": Declaration(True, ("id",)),
        "export_all": Declaration(False),
        "import_lines": Declaration(True, ("lines",)),
    }

    @checked_arguments()
    def update(
        self,
        id: str,
        tags: Sequence[str] | None = None,
        value: float | None = None,
        meta: Mapping[str, Any] | None = None,
        access: Sequence[str] | None = None,
        protected: bool | None = None,
    ) -> Record:
        """Change a memory's mutable fields by id, keeping its text; returns the record.

        Only the fields given change; naming none is `InvalidInput`. ``meta`` replaces
        the whole object (read the record, merge, and write it back to keep keys).
        The text, concepts and observation times stay, so the full-text index and
        the vector stay valid; the duplicate check keeps the observation as first
        written. A new ``access`` moves the memory to that access class. An id not
        readable here raises `UnknownMemory`.
        """
        if not isinstance(id, str) or not id:
            raise InvalidInput("id must be a memory id string", field="id")
        memory_id = id
        columns, new_access = validate.update_columns(
            {"tags": tags, "value": value, "meta": meta, "access": access,
             "protected": protected}
        )  # fmt: skip
        # Found, changed and read back in one write transaction: a concurrent forget
        # lands before it (the id is unknown) or after it (the update was whole).
        with self._store.transaction():
            seqs = self._store.visible_seqs(self.scope, [memory_id], statuses=STATUSES)
            if memory_id not in seqs:
                raise UnknownMemory(
                    f"no memory {memory_id!r} is readable here", record_id=memory_id
                )
            self._store.update_memory(seqs[memory_id], columns, new_access)
            # The record as stored, read without the role filter: a new access list may
            # put it beyond the caller's own role.
            return self._store.records_by_seq([seqs[memory_id]])[seqs[memory_id]]

    def export_all(self) -> Iterator[dict[str, Any]]:
        """The whole readable store as export lines: a versioned header, every record (of
        every status, oldest first, with ``superseded_by``), then learned links, lessons,
        taught totals, the feedback log, entities and relations (see `import_lines`).

        Vectors are not exported: an import re-embeds when an embedder is attached. The
        trust room's standing, receipts and cases, procedures, the vault index and the
        dream pass's derived layer are not carried either.
        """
        return transfer.export_all(self._store, self.scope)

    @checked_arguments("lines")
    def import_lines(
        self, lines: Sequence[Mapping[str, Any]], first_line: int = 1, rehome: bool = False
    ) -> ImportReport:
        """Import lines of `export` or `export_all` into this scope, keeping ids and times.

        A record keeps its id, times, status, supersession, valence and fields; one
        whose id (or observation) is already stored is skipped and counted. A link,
        lesson or taught total takes the exported state, so a file imported twice
        changes nothing; a logged feedback call already present is skipped; entities
        and relations are declared again (new ids). Records go into this memory's
        project and channel; a record of another agent is refused (field ``agent_id``)
        unless ``rehome`` takes it as this agent's own; a derived record inherits its
        parents' taint as a write would. An import carries no more authority than its
        caller: an entity or relation ``declared_by`` the operator is refused
        (`OperatorRequired`) for a caller without the operator role. Each bad line is
        reported with its number (counted from ``first_line``) and field; the rest is
        imported.
        """
        _check_first_line(first_line)
        validate.check_bool(rehome, "rehome")
        report = transfer.import_lines(
            self._store, self.scope, lines, first_line=first_line, rehome=rehome,
            operator=self._operator,
        )  # fmt: skip
        if self._space is not None:  # imported records are embedded as a reopen would
            self._space.backfill(self._store)
        return report


def _check_first_line(first_line: object) -> None:
    if isinstance(first_line, bool) or not isinstance(first_line, int) or first_line < 1:
        raise InvalidInput("first_line must be a positive integer", field="first_line")
