"""A LangGraph store over assocmem (the ``langgraph`` extra): `AssocmemStore`, a
`BaseStore` whose items are memories, so a graph's long-term memory is found by words,
concepts and learned links, and each query result says why it came back.

Namespaces and scopes. The first ``scope_depth`` labels of a namespace name the scope
its items live in: the labels joined with ".", which LangGraph forbids inside a label,
so the join is unambiguous. With ``scope_depth=0`` (the default) every namespace lives
in the one scope ``agent_id``. LangGraph code usually writes ``(user_id, "memories")``:
``scope_depth=1`` gives each end user a scope of their own, so what one user's feedback
and co-occurrence teach never changes another's reads. A search or namespace listing
whose prefix is shorter than ``scope_depth`` would span scopes, and the public API
cannot enumerate a store's scopes, so it is refused (`InvalidInput` naming
``namespace_prefix`` or ``prefix``); so is a put or get whose namespace names no scope.

Items. An item is one memory. Its text is what the index paths name (LangGraph's
``fields``, per store, or ``put(index=[...])``); ``"$"``, the default, is the value's
string leaves, without its keys, so a key such as ``"memory"`` on every item adds no
word to every item. Its meta holds the namespace (``namespace``, and each leading part
as ``prefix.<n>``), the ``key``, ``created_at``, the value's top-level fields as
``value.<field>`` (meta filters name no nested path, so a search's prefix and filters
run in the store this way) and ``indexed: false`` where no query may find it. A put of an
existing key writes a new version that retires the old one (a supersession key per
item; ``created_at`` is kept), and ``delete`` forgets every version, leaving no trace.

How it differs from LangGraph's stores:

- A query search returns what assocmem's `read` finds (the lexical, concept and
  learned-link arms, and the semantic arm where an ``embedder`` is given), best first,
  scored by the read's fused score, at most 1,000 deep; it does not rank every item by
  vector distance. Items put with ``index=False``, or whose index paths hold no text,
  never come back from a query (as in PostgresStore), but do without one.
- Without a query, items come most recently updated first (as PostgresStore and
  SqliteStore order them; InMemoryStore keeps insertion order).
- Filters name a value's top-level fields (``{"field": value}``, or ``$eq $ne $gt $gte
  $lt $lte``); numbers compare as numbers and strings as strings. A filter on a list,
  an object or a non-finite number, or on a field name `read` cannot carry, is checked
  here after the store's own filter, as InMemoryStore checks it.
- The ops of a batch run in order, each seeing what the earlier ones wrote
  (PostgresStore applies a batch's puts before its reads).
- A query's results are `RecalledItem`s: `SearchItem`s that also say ``why`` each
  came back.
- No TTL (``supports_ttl`` is False): a put with a ``ttl``, through `put` or a
  `PutOp`, is refused with `NotImplementedError`, as `BaseStore` refuses it. A value
  holds at most 64 KiB of JSON, and its key order is not kept.
- ``list_namespaces`` reads every item under the labels its prefix fixes (before any
  "*"), page by page: the store keeps no separate list of namespaces.
- The engine is synchronous: `abatch` runs `batch` in a worker thread.

The store is opened once (`MemoryPool`: one writer, a pool of readers), so the target
is a SQLite file or a PostgreSQL URL, not ``:memory:``.
"""

from __future__ import annotations

import asyncio
import json
import math
import operator
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import islice, takewhile
from typing import Any

from assocmem.errors import DependencyMissing, InvalidInput
from assocmem.memory import Memory
from assocmem.pool import MemoryPool
from assocmem.types import Record

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        get_text_at_path,
        validate_op_namespace,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    needed = "the LangGraph store needs `pip install assocmem[langgraph]`"
    raise DependencyMissing(needed) from exc

# The relation of the supersession key that chains an item's versions.
RELATION = "langgraph-item"
# Joins namespace labels; LangGraph refuses it inside a label, so a join splits back.
SEP = "."
VALUE = "value."  # the meta prefix of a value's top-level fields
WHOLE = "$"  # the index path of the whole value
PAGE = 500  # records per page while listing (the most a page holds)
MAX_K = 1000  # the deepest a read ranks
ORDERS: Mapping[str, Callable[[Any, Any], Any]] = {
    "$eq": operator.eq, "$ne": operator.ne, "$gt": operator.gt,
    "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le,
}  # fmt: skip
COMPARISONS = tuple(ORDERS)
# `read` refuses a where field over this length, or holding a quote, a backslash or a
# control character; a filter on such a value field is checked here instead.
MAX_FIELD_NAME = 128


class RecalledItem(SearchItem):
    """A `SearchItem` a query found, with ``why``: one line on the arm that brought it
    back, the concepts or earlier reads it came by, and the other arms that found it."""

    __slots__ = ("why",)

    def __init__(self, item: Item, score: float, why: str) -> None:
        super().__init__(
            item.namespace, item.key, item.value, item.created_at, item.updated_at, score
        )
        self.why = why


class AssocmemStore(BaseStore):
    """A LangGraph store over the assocmem store at ``target`` (a SQLite file or a
    PostgreSQL URL), or over an open `MemoryPool`, which then stays the caller's.

    ``scope_depth`` is how many leading labels of a namespace name its scope (0: all
    live in the scope ``agent_id``). ``fields`` are the index paths of an item's text
    when a put names none (LangGraph's ``fields``: ``"$"``, the default, is the whole
    value). ``options`` go to `MemoryPool` (``embedder``, ``readers``, ...).
    """

    def __init__(
        self,
        target: str | MemoryPool,
        *,
        agent_id: str = "langgraph",
        scope_depth: int = 0,
        fields: Sequence[str] | None = None,
        **options: Any,
    ) -> None:
        if isinstance(scope_depth, bool) or not isinstance(scope_depth, int) or scope_depth < 0:
            raise InvalidInput("scope_depth must be a whole number, 0 or more", field="scope_depth")
        MemoryPool.scope(agent_id)  # checked now, not at the first call
        self._agent_id, self._depth = agent_id, scope_depth
        self._fields = _checked_paths([WHOLE] if fields is None else fields, "fields")
        if isinstance(target, MemoryPool):
            if options:
                raise InvalidInput("an open MemoryPool takes no options", field=next(iter(options)))
            self._pool, self._owns_pool = target, False
        else:
            self._pool, self._owns_pool = MemoryPool(target, **options), True
        # A put reads the current version and writes the next as one step.
        self._writing = threading.Lock()

    def __enter__(self) -> AssocmemStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the store (an open pool given to the constructor stays open)."""
        if self._owns_pool:
            self._pool.close()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order, each seeing what the earlier ones wrote; one result each:
        an `Item` or None for a get, None for a put, a list of `SearchItem`s for a search
        and of namespaces for a listing."""
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` in a worker thread: the engine is synchronous, and the event loop
        stays free while it works."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            return self._get(tuple(op.namespace), str(op.key))
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise InvalidInput(f"unknown store operation {type(op).__name__}", field="ops")

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        with self._memory(namespace, "namespace") as mem:
            record = _current(mem, namespace, key)
        return None if record is None else _item(record)

    def _put(self, op: PutOp) -> None:
        namespace, key = tuple(op.namespace), str(op.key)
        if op.value is None:
            self._delete(namespace, key)
            return
        if not namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        if op.ttl is not None:
            raise NotImplementedError("TTL is not supported by AssocmemStore; set ttl=None.")
        value = _checked_value(op.value)
        paths = self._fields if op.index is None else op.index
        text = _indexed_text(value, _checked_paths(paths, "index")) if paths else None
        with self._writing, self._memory(namespace, "namespace", write=True) as mem:
            previous = _current(mem, namespace, key)
            now = _now(previous)
            created = previous.meta["created_at"] if previous else now.isoformat()
            written = mem.write(
                text or _whole_text(value),
                concepts=None if text else [],  # an item no query finds teaches no links
                meta=_meta(namespace, key, value, created, indexed=bool(text)),
                key=[_subject(namespace, key), RELATION],
                observed_at=now,
            )
        if not written.stored and written.reason != "duplicate":  # a duplicate is this value
            raise InvalidInput(written.reason or "the item was not stored", field="value")

    def _delete(self, namespace: tuple[str, ...], key: str) -> None:
        with self._writing, self._memory(namespace, "namespace", write=True) as mem:
            mem.forget(where=_version_filter(namespace, key))

    def _search(self, op: SearchOp) -> list[SearchItem]:
        offset, limit = _checked_window(op.offset, op.limit)
        prefix = tuple(op.namespace_prefix)
        where, here = _split_filter(op.filter)
        where |= _prefix_filter(prefix)
        with self._memory(prefix, "namespace_prefix") as mem:
            if op.query and op.query.strip():
                return _ranked(mem, op.query, where, here, offset, limit)
            wanted = (r for r in _records(mem, where, page=limit + offset) if _kept(r, here))
            return [_search_item(r) for r in islice(wanted, offset, offset + limit)]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        offset, limit = _checked_window(op.offset, op.limit)
        conditions = tuple(op.match_conditions or ())
        prefix = next((tuple(c.path) for c in conditions if c.match_type == "prefix"), ())
        fixed = tuple(takewhile(lambda label: label != "*", prefix))
        with self._memory(fixed, "prefix") as mem:
            stored = {r.meta["namespace"] for r in _records(mem, _prefix_filter(fixed))}
        found = {
            namespace
            for namespace in (tuple(name.split(SEP)) for name in stored)
            if all(_matches_path(c, namespace) for c in conditions)
        }
        if op.max_depth is not None:
            found = {namespace[: op.max_depth] for namespace in found}
        return sorted(found)[offset : offset + limit]

    @contextmanager
    def _memory(
        self, namespace: tuple[str, ...], field: str, *, write: bool = False
    ) -> Iterator[Memory]:
        """The `Memory` of the scope ``namespace`` names (``field`` is the argument it
        came as, named when it names none)."""
        scope = self._pool.scope(self._scope_of(namespace, field))
        with self._pool.writer(scope) if write else self._pool.reader(scope) as mem:
            yield mem

    def _scope_of(self, namespace: tuple[str, ...], field: str) -> str:
        if not self._depth:
            return self._agent_id
        if len(namespace) < self._depth:
            raise InvalidInput(
                f"{field} {namespace!r} is shorter than scope_depth={self._depth}: its first"
                f" {self._depth} label(s) name the scope (the end user) it reads or writes,"
                " and no call spans scopes; give them",
                field=field,
            )
        return SEP.join(namespace[: self._depth])


def _checked_paths(paths: Any, field: str) -> list[str]:
    if isinstance(paths, str) or not isinstance(paths, Sequence):
        raise InvalidInput(f"{field} must be a list of paths, or False", field=field)
    if not all(isinstance(p, str) and p for p in paths):
        raise InvalidInput(f"{field} paths must be non-empty strings", field=field)
    return list(paths)


def _checked_value(value: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise InvalidInput("an item's value must be a dict with string keys", field="value")
    return dict(value)


def _checked_window(offset: int, limit: int) -> tuple[int, int]:
    for name, number in (("offset", offset), ("limit", limit)):
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise InvalidInput(f"{name} must be a whole number, 0 or more", field=name)
    return offset, limit


def _indexed_text(value: Mapping[str, Any], paths: Sequence[str]) -> str:
    """The text at the index paths, each piece once, in order ("" where none is)."""
    pieces: list[str] = []
    for path in paths:
        pieces += _leaves(value) if path == WHOLE else get_text_at_path(value, path)
    return "\n".join(dict.fromkeys(p for p in pieces if p.strip()))


def _whole_text(value: Mapping[str, Any]) -> str:
    """The value's string leaves, else (a value of numbers only) its JSON."""
    return _indexed_text(value, [WHOLE]) or json.dumps(value, ensure_ascii=False, sort_keys=True)


def _leaves(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, list | tuple):
        return [leaf for item in value for leaf in _leaves(item)]
    return []


def _subject(namespace: tuple[str, ...], key: str) -> str:
    """The subject of an item's supersession key: its namespace and key, unambiguously."""
    return json.dumps([*namespace, key], ensure_ascii=False)


def _meta(
    namespace: tuple[str, ...], key: str, value: Mapping[str, Any], created: str, *, indexed: bool
) -> dict[str, Any]:
    meta: dict[str, Any] = {"namespace": SEP.join(namespace), "key": key, "created_at": created}
    meta |= {f"prefix.{n}": SEP.join(namespace[:n]) for n in range(1, len(namespace) + 1)}
    meta |= {VALUE + field: item for field, item in value.items()}
    if not indexed:
        meta["indexed"] = False
    return meta


def _now(previous: Record | None) -> datetime:
    """Now, or the current version's time if the clock stepped back: a version older
    than the current one would be kept as history, not become the item."""
    now = datetime.now(UTC)
    return max(now, _time(previous.observed_at)) if previous else now


def _time(stored: str) -> datetime:
    return datetime.fromisoformat(stored)


def _item(record: Record) -> Item:
    meta = record.meta
    return Item(
        value={name[len(VALUE) :]: v for name, v in meta.items() if name.startswith(VALUE)},
        key=meta["key"],
        namespace=tuple(meta["namespace"].split(SEP)),
        created_at=_time(meta["created_at"]),
        updated_at=_time(record.observed_at),
    )


def _search_item(record: Record) -> SearchItem:
    item = _item(record)
    return SearchItem(item.namespace, item.key, item.value, item.created_at, item.updated_at)


def _version_filter(namespace: tuple[str, ...], key: str) -> dict[str, Any]:
    """The `where` of every version of one item."""
    return {"key_subject": _subject(namespace, key), "key_relation": RELATION}


def _prefix_filter(prefix: tuple[str, ...]) -> dict[str, Any]:
    """The `where` of every item under ``prefix`` (every item, for an empty one)."""
    where: dict[str, Any] = {"key_relation": RELATION}
    if prefix:
        where[f"meta.prefix.{len(prefix)}"] = SEP.join(prefix)
    return where


def _current(mem: Memory, namespace: tuple[str, ...], key: str) -> Record | None:
    page = mem.list_memories(limit=1, status="active", where=_version_filter(namespace, key))
    return page.items[0] if page.items else None


def _records(mem: Memory, where: Mapping[str, Any], *, page: int = PAGE) -> Iterator[Record]:
    """The current items ``where`` selects, most recently updated first, page by page."""
    size, offset = max(1, min(page, PAGE)), 0
    while batch := mem.list_memories(limit=size, offset=offset, status="active", where=where).items:
        yield from batch
        offset += len(batch)


def _ranked(
    mem: Memory,
    query: str,
    where: dict[str, Any],
    here: Sequence[tuple[str, Any]],
    offset: int,
    limit: int,
) -> list[SearchItem]:
    """The indexed items a read of ``query`` finds, best first, from ``offset``."""
    if not limit:
        return []
    depth = MAX_K if here else min(MAX_K, offset + limit)  # filtered here: read deep
    where = where | {"meta.indexed": {"$ne": False}}
    found = [i for i in mem.read(query, k=depth, where=where).items if _kept(i.record, here)]
    return [RecalledItem(_item(i.record), i.score, i.why) for i in found[offset : offset + limit]]


def _split_filter(
    wanted: Mapping[str, Any] | None,
) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """A LangGraph filter as the `where` the store checks and the conditions it
    cannot carry, checked here."""
    where: dict[str, Any] = {}
    here: list[tuple[str, Any]] = []
    for field, condition in (wanted or {}).items():
        operators = _operators(field, condition)
        name = f"meta.{VALUE}{field}"
        if operators is not None and _storable(name, operators):
            where[name] = operators
        else:
            here.append((field, condition))
    return where, here


def _operators(field: str, condition: Any) -> dict[str, Any] | None:
    """The condition as operators, or None for a nested match (a dict of fields)."""
    if not isinstance(condition, Mapping):
        return {"$eq": condition}
    if not any(str(op).startswith("$") for op in condition):
        return None
    unknown = [op for op in condition if op not in COMPARISONS]
    if unknown:
        raise InvalidInput(
            f"filter: unknown operator {unknown[0]!r} on {field!r}; the operators are"
            f" {' '.join(COMPARISONS)}",
            field="filter",
        )
    return dict(condition)


def _storable(name: str, operators: Mapping[str, Any]) -> bool:
    """Whether `read`'s `where` carries these operators on this field as LangGraph
    means them."""
    if len(name) > MAX_FIELD_NAME or any(ch in '"\\' or ord(ch) < 32 for ch in name):
        return False
    return all(_storable_value(op, v) for op, v in operators.items())


def _storable_value(op: str, value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" not in value  # `read` refuses NUL; no stored text can hold one
    if isinstance(value, bool) or value is None:
        return op in ("$eq", "$ne")  # `where` orders only numbers and strings
    if isinstance(value, int):
        return -(2**63) <= value < 2**63
    return isinstance(value, float) and math.isfinite(value)


def _kept(record: Record, here: Sequence[tuple[str, Any]]) -> bool:
    meta = record.meta
    return all(_matches(meta.get(f"{VALUE}{field}"), condition) for field, condition in here)


def _matches(found: Any, wanted: Any) -> bool:
    """InMemoryStore's test of one value against a filter condition."""
    if isinstance(wanted, Mapping):
        if any(str(op).startswith("$") for op in wanted):
            return all(_compare(found, op, v) for op, v in wanted.items())
        return isinstance(found, Mapping) and all(
            _matches(found.get(k), v) for k, v in wanted.items()
        )
    if isinstance(wanted, list | tuple):
        return (
            isinstance(found, list | tuple)
            and len(found) == len(wanted)
            and all(_matches(f, w) for f, w in zip(found, wanted, strict=True))
        )
    return bool(found == wanted)


def _compare(found: Any, op: str, wanted: Any) -> bool:
    if op not in ORDERS:
        raise InvalidInput(
            f"filter: unknown operator {op!r}; the operators are {' '.join(COMPARISONS)}",
            field="filter",
        )
    if op in ("$eq", "$ne"):
        return bool(ORDERS[op](found, wanted))
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (found, wanted))
    if not numbers and not (isinstance(found, str) and isinstance(wanted, str)):
        return False  # as in the store: only numbers and strings have an order
    return bool(ORDERS[op](found, wanted))


def _matches_path(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Whether ``namespace`` starts (or ends) with the condition's path, "*" any label."""
    if condition.match_type not in ("prefix", "suffix"):
        raise InvalidInput(
            f"match_type must be prefix or suffix, not {condition.match_type!r}",
            field="match_conditions",
        )
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "suffix":
        namespace, path = namespace[::-1], path[::-1]
    return all(want in ("*", label) for label, want in zip(namespace, path, strict=False))
