"""What an agent's tool list and results hold: compact by default.

Every tool an MCP server lists costs prompt space in every call an agent makes, and
every result costs it again in the conversation. So the published schemas drop what
a model does not need (titles, and the null alternative of an optional argument,
which it can simply leave out), and the everyday tools answer in a compact form: for
each memory its text, id, source and a one-line why, the full result beside it only
when ``detail`` asks for it. Output schemas keep their null alternatives: a client
checks results against them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NotRequired, TypeVar

# pydantic reads a TypedDict from typing_extensions on Python before 3.12.
from typing_extensions import TypedDict

from assocmem.types import ReadResult, Record, WriteResult

DETAIL_DOC = "also return the full result under `detail` (score parts, every field)"


class CompactItem(TypedDict):
    """A memory a read returned: what it says, and why it came back."""

    id: str
    text: str
    source: str
    why: str


class CompactRead(TypedDict):
    """A read: its handle (give it to `feedback` as ``read``) and its memories, best first."""

    id: str
    items: list[CompactItem]
    detail: NotRequired[dict[str, Any]]


class CompactRecord(TypedDict):
    """A stored memory's everyday fields, its concepts as its text wrote them."""

    id: str
    text: str
    kind: str
    source: str | None
    concepts: list[str]
    tags: list[str]
    observed_at: str
    status: str
    detail: NotRequired[dict[str, Any]]


class CompactWrite(TypedDict):
    """What a write did: the new memory's id, or why nothing was stored, and its
    concepts as it spelled them."""

    id: str | None
    stored: bool
    reason: str | None
    concepts: list[str]
    detail: NotRequired[dict[str, Any]]


def read(result: ReadResult, detail: bool) -> CompactRead:
    items = [
        CompactItem(id=i.record.id, text=i.record.text, source=i.source, why=i.why)
        for i in result.items
    ]
    return _detailed(CompactRead(id=result.id, items=items), result, detail)


def record(found: Record, detail: bool) -> CompactRecord:
    compact = CompactRecord(
        id=found.id, text=found.text, kind=found.kind, source=found.source,
        concepts=list(found.concept_forms), tags=list(found.tags),
        observed_at=found.observed_at, status=found.status,
    )  # fmt: skip
    return _detailed(compact, found, detail)


def records(found: list[Record], detail: bool) -> list[CompactRecord]:
    return [record(each, detail) for each in found]


def write(result: WriteResult, detail: bool) -> CompactWrite:
    compact = CompactWrite(
        id=result.id, stored=result.stored, reason=result.reason,
        concepts=list(result.concept_forms),
    )  # fmt: skip
    return _detailed(compact, result, detail)


Compact = TypeVar("Compact", CompactRead, CompactRecord, CompactWrite)


def _detailed(compact: Compact, full: ReadResult | Record | WriteResult, detail: bool) -> Compact:
    """The compact form, with the full result under ``detail`` where it was asked for."""
    if detail:
        compact["detail"] = full.to_dict()
    return compact


# The operations answered compactly: the compact type and how to make it.
COMPACT: Mapping[str, tuple[Any, Callable[[Any, bool], Any]]] = {
    "read": (CompactRead, read),
    "get": (list[CompactRecord], records),
    "update": (CompactRecord, record),
    "write": (CompactWrite, write),
}


def lean(schema: Any, *, optional_nulls: bool) -> Any:
    """``schema`` without titles; with ``optional_nulls``, an optional argument's null
    alternative and null default dropped too (a caller leaves it out instead)."""
    if isinstance(schema, list):
        return [lean(part, optional_nulls=optional_nulls) for part in schema]
    if not isinstance(schema, dict):
        return schema
    kept = {k: lean(v, optional_nulls=optional_nulls) for k, v in schema.items() if k != "title"}
    if optional_nulls and "anyOf" in kept:
        options = [option for option in kept["anyOf"] if option != {"type": "null"}]
        if len(options) == 1 and len(kept["anyOf"]) == 2:
            kept = {**options[0], **{k: v for k, v in kept.items() if k != "anyOf"}}
    if optional_nulls and "default" in kept and kept["default"] is None:
        del kept["default"]
    return kept
