"""The everyday comforts of `Memory`: update a memory by id, and move a whole store
out and back in (`export_all`, `import_lines`).

Invariant: each operation changes only what the caller could write itself: its own
agent's memories, in a scope it reads; an id it cannot read is `UnknownMemory`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assocmem.errors import UnknownMemory
from assocmem.operations.base import MemoryBase, checked_arguments
from assocmem.types import STATUSES, Record
from assocmem.write import validate as records


class ComfortOperations(MemoryBase):
    """Update, export and import (mixed into `Memory`)."""

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
        (memory_id,) = records.check_ids([id], field="id")
        columns, new_access = records.update_columns(
            {"tags": tags, "value": value, "meta": meta, "access": access,
             "protected": protected}
        )  # fmt: skip
        seqs = self._store.visible_seqs(self.scope, [memory_id], statuses=STATUSES)
        if memory_id not in seqs:
            raise UnknownMemory(f"no memory {memory_id!r} is readable here", record_id=memory_id)
        self._store.update_memory(seqs[memory_id], columns, new_access)
        # The record as stored, read without the role filter: a new access list may
        # put it beyond the caller's own role.
        return self._store.records_by_seq([seqs[memory_id]])[seqs[memory_id]]
