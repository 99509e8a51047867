"""What every group of `Memory`'s operations stands on: the argument check each public
method passes first, and the state and core helpers a group may use.

Invariant: a group (a capability's `operations.py`) reaches the store only through the
attributes declared here and the rooms it calls; `Memory` composes the groups and sets
the attributes in its constructor.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from assocmem.capabilities import Parts
from assocmem.recall.profiles import Profile
from assocmem.schema import NewMemory
from assocmem.text.clean import check_clean
from assocmem.types import Record, Scope, WriteResult
from assocmem.vectors.space import VectorSpace

P = ParamSpec("P")
R = TypeVar("R")


def checked_arguments(*per_item: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Every argument of the method passes `check_clean` (no NUL, no lone surrogate, no
    integer beyond 64 bits, no nesting past `MAX_NESTING`) before the method runs, so
    hostile values fail as `InvalidInput` naming the parameter on every surface alike.
    Parameters named in ``per_item`` are checked item by item by the method itself (a
    batch refuses its bad items, not itself)."""

    def decorate(method: Callable[P, R]) -> Callable[P, R]:
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
        # The names positional arguments bind to, in order (a ``*args`` name takes the rest).
        slots = [p for p in inspect.signature(method).parameters.values() if p.kind in kinds][1:]

        def name_at(position: int) -> str:
            slot = slots[min(position, len(slots) - 1)]
            return slot.name if position < len(slots) or slot.kind in kinds[1:] else "arguments"

        @functools.wraps(method)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            named = [(name_at(i), v) for i, v in enumerate(args[1:])] + list(kwargs.items())
            for name, value in named:
                if name not in per_item:
                    check_clean(value, name)
            return method(*args, **kwargs)

        return wrapper

    return decorate


@dataclass(frozen=True)
class Declaration:
    """What the signature cannot say about an operation."""

    writes: bool
    # Parameters a CLI user gives by position, in order (the rest are --flags).
    positional: tuple[str, ...] = ()


class MemoryBase:
    """The state `Memory` holds, shared by every group of operations."""

    scope: Scope
    _store: Parts
    _space: VectorSpace | None
    _profile: Profile
    _owns_store: bool
    _vault_roots: tuple[Path, ...] | None
    _strict: bool
    _receipts: bool
    _receipt_key: Any
    _reinforce: bool
    # The operator gate (graph/operator.py): may declare as the operator and remove
    # what it declared. True unless a server says the caller's key lacks the role.
    _operator: bool

    if TYPE_CHECKING:
        # Core operations of `Memory` the groups call.
        def get(self, ids: Sequence[str]) -> list[Record]: ...

        def _select(
            self,
            ids: Sequence[str] | None,
            where: Mapping[str, Any] | None,
            statuses: tuple[str, ...] = ("active",),
        ) -> list[int]: ...

        def _store_memories(
            self,
            memories: Sequence[NewMemory],
            associations: Sequence[Any],
            signed: Sequence[tuple[str, str] | None] = (),
        ) -> list[WriteResult]: ...
