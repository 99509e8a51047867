"""A mem0-style facade, for code written against mem0's ``Memory``: ``add``, ``search``,
``get``, ``get_all``, ``update``, ``delete``, ``delete_all`` and ``history``, with mem0's
``user_id``, ``agent_id`` and ``run_id``, answering in mem0's ``{"results": [...]}`` shape.

It is a facade over assocmem, not mem0, and differs where assocmem does:

- Each end user is a scope of its own: ``user_id``, else ``agent:<agent_id>``, else
  ``run:<run_id>`` (one of them is required, as in mem0). So one user's memories, and
  what feedback and co-occurrence taught, never change another user's reads. Within a
  user, ``agent_id`` and ``run_id`` are kept on each memory and filter ``search``,
  ``get_all`` and ``delete_all``.
- ``add`` stores what it is given, verbatim: a string as one memory, a list of chat
  messages as one memory per message (its ``role`` kept). No model extracts facts, so
  ``infer`` is accepted and has no effect.
- A memory's text never changes in assocmem: ``update`` writes the new text as a new
  memory that retires the old one (both stay in ``history``), and says the new id;
  ``get`` of either id answers with the current text, and ``delete`` removes every
  version.
- ``search`` scores are assocmem's fused scores, and each result says ``why`` it came back.

The store is opened once (`MemoryPool`: one writer, a pool of readers), so the target is
a SQLite file or a PostgreSQL URL, not ``:memory:``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from assocmem.errors import InvalidInput, UnknownMemory
from assocmem.memory import Memory
from assocmem.pool import MemoryPool
from assocmem.types import Record

# The relation of the key that chains a mem0 memory's versions.
KEY_RELATION = "mem0-text"
# The meta fields of mem0's ids within a user's scope.
IDS = ("user_id", "agent_id", "run_id")
PAGE = 500  # records per page while gathering a user's memories (the most a page holds)


class Mem0Memory:
    """mem0's ``Memory`` methods over the assocmem store at ``target`` (``options`` as
    for `MemoryPool`: ``embedder``, ``readers``, ...)."""

    def __init__(self, target: str, **options: Any) -> None:
        self._pool = MemoryPool(target, **options)

    def __enter__(self) -> Mem0Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._pool.close()

    def add(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = True,
    ) -> dict[str, Any]:
        """Store ``messages`` (a string, or chat messages ``{"role", "content"}``), one
        memory each; returns ``{"results": [{"id", "memory", "event": "ADD"}]}``."""
        ids = _ids(user_id, agent_id, run_id)
        texts = _texts(messages)
        rows = [
            {"text": text, "meta": {**(metadata or {}), **ids, **({"role": role} if role else {})},
             "key": [uuid.uuid4().hex, KEY_RELATION]}
            for text, role in texts
        ]  # fmt: skip
        with self._memory(ids, write=True) as mem:
            written = mem.write_many(rows)
        refused = [r for r in written if not r.stored]
        if refused:
            raise InvalidInput(refused[0].reason or "a message was not stored", field="messages")
        return {
            "results": [
                {"id": r.id, "memory": text, "event": "ADD"}
                for r, (text, _) in zip(written, texts, strict=True)
            ]
        }

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int = 100,
        filters: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The memories that matter for ``query``, best first: ``{"results": [...]}``,
        each with its ``score`` and ``why``. ``filters`` are metadata conditions (as
        `read`'s ``where`` takes them)."""
        ids = _ids(user_id, agent_id, run_id)
        with self._memory(ids) as mem:
            found = mem.read(query, k=limit, where=_where(ids, filters))
        return {
            "results": [
                {**_result(item.record), "score": item.score, "why": item.why}
                for item in found.items
            ]
        }

    def get(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None) -> dict[str, Any]:  # fmt: skip
        """The memory ``memory_id`` as it reads now (its current version)."""
        ids = _ids(user_id, agent_id, run_id)
        with self._memory(ids) as mem:
            return _result(_current(mem, memory_id))

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int = 100,
        filters: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A user's memories, newest first, at most ``limit``: ``{"results": [...]}``."""
        ids = _ids(user_id, agent_id, run_id)
        with self._memory(ids) as mem:
            page = mem.list_memories(limit=limit, status="active", where=_where(ids, filters))
        return {"results": [_result(record) for record in page.items]}

    def update(
        self, memory_id: str, data: str, *, user_id: str | None = None,
        agent_id: str | None = None, run_id: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Give ``memory_id`` the text ``data``: a new version retires the current one;
        returns ``{"message", "id"}`` with the new version's id."""
        ids = _ids(user_id, agent_id, run_id)
        with self._memory(ids, write=True) as mem:
            current = _current(mem, memory_id)
            if not current.key or current.key[1] != KEY_RELATION:
                raise InvalidInput(
                    f"memory {memory_id!r} was not added through this facade: its text has no"
                    " versions (change its fields with Memory.update)",
                    field="memory_id",
                )
            written = mem.write(data, meta=current.meta, key=list(current.key))
        return {"message": "Memory updated successfully!", "id": written.id}

    def delete(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Forget ``memory_id`` and every version of it, for good."""
        ids = _ids(user_id, agent_id, run_id)
        with self._memory(ids, write=True) as mem:
            mem.forget(ids=[r.id for r in _versions(mem, memory_id)])
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self, *, user_id: str | None = None, agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Forget every memory of the user (of its ``agent_id`` / ``run_id`` where given)."""
        ids = _ids(user_id, agent_id, run_id)
        with self._memory(ids, write=True) as mem:
            doomed = [r.id for r in _every(mem, _where(ids, None))]
            if doomed:
                mem.forget(ids=doomed)
        return {"message": "Memories deleted successfully!"}

    def history(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[dict[str, Any]]:  # fmt: skip
        """Every version of ``memory_id``, oldest first."""
        ids = _ids(user_id, agent_id, run_id)
        with self._memory(ids) as mem:
            return [_result(record) for record in _versions(mem, memory_id)]

    @contextmanager
    def _memory(self, ids: Mapping[str, str], *, write: bool = False) -> Iterator[Memory]:
        scope = self._pool.scope(_scope_of(ids))
        with self._pool.writer(scope) if write else self._pool.reader(scope) as mem:
            yield mem


def _ids(user_id: str | None, agent_id: str | None, run_id: str | None) -> dict[str, str]:
    given = {name: value for name, value in zip(IDS, (user_id, agent_id, run_id), strict=True)
             if value is not None}  # fmt: skip
    if not given:
        raise InvalidInput("one of user_id, agent_id or run_id is required", field="user_id")
    for name, value in given.items():
        if not isinstance(value, str) or not value.strip():
            raise InvalidInput(f"{name} must be a non-empty string", field=name)
    return given


# The scope of a user, by the first of its ids given: a user's own, else an agent's or
# a run's under a prefix, so no agent or run shares a scope with a user of that name.
SCOPE_PREFIX = {"user_id": "", "agent_id": "agent:", "run_id": "run:"}


def _owner(ids: Mapping[str, str]) -> str:
    """The id that names the scope: ``user_id``, else ``agent_id``, else ``run_id``."""
    return next(name for name in IDS if name in ids)


def _scope_of(ids: Mapping[str, str]) -> str:
    owner = _owner(ids)
    return SCOPE_PREFIX[owner] + ids[owner]


def _texts(messages: str | Sequence[Mapping[str, Any]]) -> list[tuple[str, str | None]]:
    """(text, role) of each message: a string is one message with no role."""
    if isinstance(messages, str):
        return [(messages, None)]
    if not isinstance(messages, Sequence) or not messages:
        raise InvalidInput("messages must be a string or a non-empty list", field="messages")
    texts = []
    for n, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("content"), str):
            raise InvalidInput(f"message {n} has no text content", field="messages")
        role = message.get("role")
        texts.append((str(message["content"]), role if isinstance(role, str) else None))
    return texts


def _where(ids: Mapping[str, str], filters: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The meta conditions of the ids below the scope, and the caller's filters (None
    where there are none)."""
    owner = _owner(ids)
    conditions = {f"meta.{name}": value for name, value in ids.items() if name != owner}
    for name, value in (filters or {}).items():
        conditions[name if name.startswith("meta.") else f"meta.{name}"] = value
    return conditions or None


def _result(record: Record) -> dict[str, Any]:
    meta = dict(record.meta or {})
    ids = {name: meta.pop(name) for name in IDS if name in meta}
    return {"id": record.id, "memory": record.text, "metadata": meta,
            "created_at": record.observed_at, **ids}  # fmt: skip


def _versions(mem: Memory, memory_id: str) -> list[Record]:
    """Every version of the memory, oldest first (itself alone if it has no chain)."""
    # Listed by id, whatever its status: a retired version is still one of the chain.
    found = mem.list_memories(limit=1, where={"id": memory_id}).items
    if not found:
        raise UnknownMemory(f"no memory {memory_id!r} is readable here", record_id=memory_id)
    record = found[0]
    if record.key and record.key[1] == KEY_RELATION:
        return mem.history(list(record.key))
    return [record]


def _current(mem: Memory, memory_id: str) -> Record:
    versions = _versions(mem, memory_id)
    active = [r for r in versions if r.status == "active"]
    return active[-1] if active else versions[-1]


def _every(mem: Memory, where: Mapping[str, Any] | None) -> list[Record]:
    found: list[Record] = []
    while page := mem.list_memories(limit=PAGE, offset=len(found), where=where).items:
        found.extend(page)
    return found
