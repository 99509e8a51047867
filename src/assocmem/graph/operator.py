"""The operator gate: who may declare as the operator, and remove what it declared.

A served key without the ``"operator"`` role speaks as an agent: it may not declare
with ``declared_by="operator"``, nor retract or delete anything the operator declared
(deleting an entity takes its mentions and relations along, so those count too).

Invariant: a refused call changes nothing; the check and the removal it guards run
in one write transaction, so no operator declaration can slip in between them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from assocmem.errors import OperatorRequired
from assocmem.types import Scope


class OperatorDeclarations(Protocol):
    """What the gate reads: whether a removal would take an operator declaration."""

    def operator_declared(
        self,
        scope: Scope,
        *,
        relation_ids: Sequence[int] = (),
        mentions: Sequence[tuple[int, int]] = (),
        entity_ids: Sequence[int] = (),
    ) -> bool: ...


def check_declarer(declared_by: str, operator: bool) -> None:
    """Refuse ``declared_by="operator"`` from a caller without the operator role."""
    if declared_by == "operator" and not operator:
        raise OperatorRequired(
            "declaring as the operator needs a key with the operator role", field="declared_by"
        )


def check_removal(
    store: OperatorDeclarations,
    scope: Scope,
    operator: bool,
    *,
    relation_ids: Sequence[int] = (),
    mentions: Sequence[tuple[int, int]] = (),
    entity_ids: Sequence[int] = (),
) -> None:
    """Refuse a removal that would take an operator declaration, unless the caller is
    the operator (call it inside the transaction that removes)."""
    if operator:
        return
    if store.operator_declared(
        scope, relation_ids=relation_ids, mentions=mentions, entity_ids=entity_ids
    ):
        raise OperatorRequired(
            "this removes what the operator declared; it needs a key with the operator role",
            field="declared_by",
        )
