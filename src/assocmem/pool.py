"""`MemoryPool`: one store served to many callers, one writer and a pool of readers.

Invariants: every write goes through the one writer connection; a reader never
writes, not even the access clock a read advances (it is kept on the writer); each
`Memory` handed out sees the caller's scope over the same vector space, and a read
runs the vector arm on its own reader connection, inside its own snapshot.
"""

from __future__ import annotations

import queue
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import assocmem.trust.receipts
from assocmem.capabilities import Parts, open_store
from assocmem.memory import Memory, checked_scope
from assocmem.types import Scope
from assocmem.vectors.embedders import Embedder, load_embedder
from assocmem.vectors.space import VectorSpace
from assocmem.write.validate import check_bool

READERS = 4


class MemoryPool:
    """The store at ``target`` opened once for writing and ``readers`` times for reading.

    ``embedder`` (an `Embedder` or a registered name) attaches one vector space that
    every caller shares. ``vault_roots`` bounds the folders every handed-out `Memory`
    may index as a vault (None: any; a server passes the operator's roots, maybe none).
    ``strict_corroboration``, ``receipts`` and ``receipt_key`` are every handed-out
    `Memory`'s, as for its constructor: the writer appends each write's receipt to the
    store's one chain.
    """

    def __init__(
        self,
        target: str,
        *,
        readers: int = READERS,
        embedder: Embedder | str | None = None,
        vault_roots: Sequence[str] | None = None,
        strict_corroboration: bool = False,
        receipts: bool = False,
        receipt_key: Any = None,
    ) -> None:
        self._vault_roots = None if vault_roots is None else tuple(vault_roots)
        # Checked here, as receipts are, so a bad setting fails the start, not a request.
        self._strict = check_bool(strict_corroboration, "strict_corroboration")
        self._receipts, self._receipt_key = assocmem.trust.receipts.settings(receipts, receipt_key)
        self._writer = open_store(target)
        self._readers: queue.Queue[Parts] = queue.Queue()
        try:
            for _ in range(readers):
                reader = open_store(target)
                reader.keep_access_clock_in(self._writer)
                self._readers.put(reader)
            model = load_embedder(embedder) if isinstance(embedder, str) else embedder
            self._space = VectorSpace.checked(self._writer, model) if model else None
        except BaseException:
            self.close()
            raise

    @staticmethod
    def scope(
        agent_id: str, project_id: str = "", channel: str = "", role: str | None = None
    ) -> Scope:
        """A caller's scope, checked as `Memory` checks its own."""
        return checked_scope(agent_id, project_id, channel, role)

    @contextmanager
    def writer(self, scope: Scope, *, operator: bool = True) -> Iterator[Memory]:
        """A `Memory` for ``scope`` on the writer connection (``operator`` as for
        `Memory.attached`)."""
        yield Memory.attached(
            self._writer,
            scope,
            self._space,
            vault_roots=self._vault_roots,
            strict_corroboration=self._strict,
            receipts=self._receipts,
            receipt_key=self._receipt_key,
            operator=operator,
        )

    @contextmanager
    def reader(self, scope: Scope, *, operator: bool = True) -> Iterator[Memory]:
        """A `Memory` for ``scope`` on a reader connection, returned to the pool after."""
        store = self._readers.get()
        try:
            yield Memory.attached(
                store,
                scope,
                self._space,
                vault_roots=self._vault_roots,
                strict_corroboration=self._strict,
                receipts=self._receipts,
                receipt_key=self._receipt_key,
                operator=operator,
            )
        finally:
            self._readers.put(store)

    def check(self) -> None:
        """Raise unless a reader answers a query (readiness)."""
        store = self._readers.get()
        try:
            store.size()
        finally:
            self._readers.put(store)

    def close(self) -> None:
        self._writer.close()
        while not self._readers.empty():
            self._readers.get().close()
