"""What repeated use earns, added to `Memory`: candidate procedures and their
promotion gate, and the graduation of corroborated episodes (the procedures/ room).

Invariant: nothing is promoted or graduated on a writer's say-so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from assocmem.errors import InvalidInput
from assocmem.lifecycle.types import Lifecycle
from assocmem.operations.base import Declaration, MemoryBase, checked_arguments
from assocmem.procedures import gate, graduation
from assocmem.procedures.types import GraduationReport, Procedure
from assocmem.schema import NewMemory
from assocmem.store import View
from assocmem.types import STATUSES, WriteResult
from assocmem.write import validate


class ProcedureOperations(MemoryBase):
    """The procedures room's operations: procedure versions and graduation (mixed into `Memory`)."""

    # The registry's facts of this group's operations (`surface.py`).
    declared: ClassVar[dict[str, Declaration]] = {
        # procedures and graduation (the procedures room)
        "propose_procedure": Declaration(True, ("episodes",)),
        "promote_procedure": Declaration(True, ("id",)),
        "revise_procedure": Declaration(True, ("id",)),
        "retire_procedure": Declaration(True, ("id",)),
        "graduate": Declaration(True),
        "ungraduate": Declaration(True, ("ids",)),
    }

    @checked_arguments()
    def propose_procedure(
        self,
        episodes: Sequence[str],
        steps: Sequence[Any],
        preconditions: Mapping[str, Any] | None = None,
        checks: Sequence[Mapping[str, Any]] | None = None,
        name: str | None = None,
    ) -> Procedure:
        """Propose a candidate procedure from episodes; it is not readable until promoted.

        ``steps`` are action strings, and guards ``{"when": condition, "do": action}``
        that answer a case first; ``preconditions`` (field → value, list, or
        ``$ne $in $nin $exists``) say which cases it repairs, matched on an episode's
        ``meta``; ``checks`` are cases ``{"case": {facts}, "expect": response}``, a
        response being ``"apply"``, ``"decline"`` or a guard's action.
        """
        return gate.propose(
            self._store, View(self.scope), episodes, steps, preconditions, checks, name
        )

    @checked_arguments()
    def promote_procedure(self, id: str) -> Procedure:
        """Run the promotion gate: ≥ 2 covered successful episodes, no covered failed
        one (a counterexample), every check case answered as expected. A pass writes a
        ``procedural`` record referencing its episodes, preconditions and checks; a
        failure leaves it ``rejected`` with the reason."""
        view = View(self.scope)
        return gate.promote(self._store, view, gate.row(self._store, view, id), self._write_one)

    @checked_arguments()
    def revise_procedure(
        self,
        id: str,
        steps: Sequence[Any] | None = None,
        preconditions: Mapping[str, Any] | None = None,
        checks: Sequence[Mapping[str, Any]] | None = None,
        episodes: Sequence[str] | None = None,
    ) -> Procedure:
        """Propose a new version of a procedure (what is not given is kept, episodes
        are added to its references) and run the gate on it: a pass supersedes the old
        version and its record; a failure leaves the old one in force."""
        view = View(self.scope)
        old = gate.row(self._store, view, id)
        new = gate.propose(
            self._store, view, [*old.episodes, *(episodes or [])],
            old.steps if steps is None else steps,
            old.preconditions if preconditions is None else preconditions,
            old.checks if checks is None else checks, old.name, supersedes=old,
        )  # fmt: skip
        return gate.promote(self._store, view, gate.row(self._store, view, new.id), self._write_one)

    @checked_arguments()
    def retire_procedure(self, id: str, retired: bool = True) -> Procedure:
        """Retire a promoted procedure (its record is archived), or bring it back."""
        if not isinstance(retired, bool):
            raise InvalidInput("retired must be true or false", field="retired")
        view = View(self.scope)
        return gate.retire(self._store, view, gate.row(self._store, view, id), retired)

    def graduate(self) -> GraduationReport:
        """Graduate corroborated episodic memories to semantic: a helpful outcome
        (feedback summing above zero, or a good credit) or ≥ 2 distinct canonical
        sources. Its own kind or confidence never counts; each move is recorded with
        its evidence (`ungraduate` takes it back)."""
        return graduation.graduate(self._store, View(self.scope), self._strict)

    @checked_arguments()
    def ungraduate(self, ids: Sequence[str]) -> Lifecycle:
        """Take back the graduation of these memories (semantic back to episodic)."""
        with self._store.transaction():  # chosen and reverted as one, as for `update`
            seqs = self._select(ids, None, statuses=STATUSES)
            wanted = dict(zip(validate.check_ids(ids), seqs, strict=True))
            return graduation.revert(self._store, wanted)

    def _write_one(self, memory: NewMemory) -> WriteResult:
        (result,) = self._store_memories([memory], [None])
        return result
