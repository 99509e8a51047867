"""SQL of the reads kept as handles, and of what outcomes taught them, for both backends.

A mixin of `SQLStore`. A read is queued in its process and written by the next
write transaction (a reader never waits for the writer), or at close. A read row
holds what was asked (concept names, the query vector) in the reader's own layer,
never what the memories say; which memories it returned are `read_items` rows
(naming the read by its integer `seq`, the handle being long for a row per item),
deleted with the read when one of them is forgotten. Invariants: reads are found
only through the reader's layers; unrated reads are kept up to `READS_KEPT` per
layer, rated ones as long as their lessons.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Collection, Sequence

from assocmem.errors import AssocmemError
from assocmem.links.rows import LearnedPrecedent
from assocmem.store.core import SQLStore
from assocmem.store.params import KEYED, in_list, translated
from assocmem.store.parts import StorePart
from assocmem.store.rows import AskedRead
from assocmem.text import times
from assocmem.types import Scope

log = logging.getLogger(__name__)

# Unrated reads kept per layer: enough for feedback to arrive long after its read
# (an agent rates within its task), few enough that reads never outgrow the memories.
READS_KEPT = 10_000
# A layer's reads past `READS_KEPT` are pruned each time this many more reads have
# been written, so pruning (a scan of the kept reads' index) is paid once per batch.
PRUNE_EVERY = 100
# Reads waiting in a process for its next write: a reader never waits for the
# writer, so a read is queued and written by the next write transaction (feedback
# is one), or at close. Past this many, the oldest are dropped unkept.
QUEUED_MAX = 10_000


class ReadQueries(SQLStore):
    """Reads as handles, and their lessons (mixed into `SQLStore`)."""

    # The writer that keeps a reader connection's access clock (`keep_access_clock_in`):
    # the same parts over another connection, so it keeps the reader's reads too.
    _clock: ReadQueries | None

    def init_reads(self) -> None:
        """A new connection's queue of reads to write."""
        self._queue_lock = threading.Lock()
        self._queued: dict[str, tuple[Scope, AskedRead, tuple[int, ...]]] = {}
        self._flushing: list[str] = []  # the ids the open write transaction wrote
        self._reads_written = 0

    def record_read(self, scope: Scope, read: AskedRead, returned: Sequence[int]) -> None:
        if isinstance(self._clock, ReadQueries):  # a reader connection: its writer keeps it
            self._clock.record_read(scope, read, returned)
            return
        if self.read_only:
            return
        with self._queue_lock:
            self._queued[read.id] = (scope, read, tuple(dict.fromkeys(returned)))
            while len(self._queued) > QUEUED_MAX:
                del self._queued[next(iter(self._queued))]

    def flush_reads(self) -> None:
        """Write the queued reads now (a write transaction of their own)."""
        if self._queued:
            self.write_queued()  # `write_queued_reads` writes them as it begins

    def write_queued_reads(self) -> None:
        """A write transaction's hook as it begins: the queued reads go in with it."""
        with self._queue_lock:
            batch = list(self._queued.values())
        self._flushing = [read.id for _, read, _ in batch]
        if not batch:
            return
        at = times.to_micros(times.now())
        layers = {scope: self._own_layer(scope) for scope, _, _ in batch}
        self._conn.executemany(
            "INSERT INTO reads (id, scope_id, at, concepts, model, vector) VALUES (?,?,?,?,?,?)"
            " ON CONFLICT (id) DO NOTHING",
            [(read.id, layers[scope], at, json.dumps(list(read.concepts)), read.model,
              read.vector) for scope, read, _ in batch],
        )  # fmt: skip
        self._conn.executemany(
            "INSERT INTO read_items (read_seq, memory_seq) SELECT seq, ? FROM reads WHERE id = ?"
            " ON CONFLICT (read_seq, memory_seq) DO NOTHING",
            [(seq, read.id) for _, read, returned in batch for seq in returned],
        )
        before, self._reads_written = self._reads_written, self._reads_written + len(batch)
        if before // PRUNE_EVERY != self._reads_written // PRUNE_EVERY:
            for layer in sorted(set(layers.values())):
                self._prune_reads(layer)

    def drop_written_reads(self) -> None:
        """A commit's hook: the reads it wrote leave the queue."""
        with self._queue_lock:
            for read_id in self._flushing:
                self._queued.pop(read_id, None)
        self._flushing = []

    def keep_queued_reads(self) -> None:
        """Write the queued reads as the store closes (a backend's `close` calls it
        first, while its helpers still run); a failure is logged, not raised."""
        try:
            self.flush_reads()
        except AssocmemError as exc:
            log.warning("reads not kept at close: %s", exc)

    def _prune_reads(self, layer: int) -> None:
        doomed = [
            read_id
            for (read_id,) in self._query(
                "SELECT id FROM reads WHERE scope_id = ? AND rated_at IS NULL"
                " ORDER BY at DESC, id DESC LIMIT 1000000000 OFFSET ?",
                [layer, READS_KEPT],
            )
        ]
        self._delete_reads(doomed)

    def _delete_reads(self, read_ids: Sequence[str]) -> None:
        self._execute_in(
            "DELETE FROM read_items WHERE read_seq IN (SELECT seq FROM reads WHERE id IN (?*))",
            read_ids,
        )
        self._execute_in("DELETE FROM read_lessons WHERE read_id IN (?*)", read_ids)
        self._execute_in("DELETE FROM reads WHERE id IN (?*)", read_ids)

    @translated
    def asked_read(self, scope: Scope, read_id: str) -> AskedRead | None:
        layers = self._layers(scope)
        if not layers:
            return None
        rows = self._query(
            KEYED + "SELECT id, concepts, model, vector FROM reads"
            f" WHERE id = ? AND {in_list('scope_id', layers)}",
            [read_id, *layers],
        )
        if not rows:
            return None
        found, concepts, model, vector = rows[0]
        return AskedRead(found, tuple(json.loads(concepts)), model, _bytes(vector))

    @translated
    def teach_read(self, read_id: str, rated: Sequence[tuple[int, float]]) -> None:
        at = times.to_micros(times.now())
        with self.transaction():
            self._conn.executemany(
                "INSERT INTO read_lessons (read_id, memory_seq, weight, outcomes, updated_at)"
                " VALUES (?,?,?,1,?) ON CONFLICT (read_id, memory_seq)"
                " DO UPDATE SET weight = read_lessons.weight + excluded.weight,"
                " outcomes = read_lessons.outcomes + 1, updated_at = excluded.updated_at",
                [(read_id, seq, outcome, at) for seq, outcome in rated],
            )
            self._conn.execute(
                "UPDATE reads SET rated_at = ? WHERE id = ? AND rated_at IS NULL", [at, read_id]
            )

    @translated
    def rated_reads_mark(self, scope: Scope) -> tuple[int, int]:
        layers = self._layers(scope)
        if not layers or self._empty("read_lessons"):
            return 0, 0
        mark: tuple[int, int] = self._remembered(
            ("rated reads", tuple(layers)), lambda: self._rated_reads_mark(layers)
        )
        return mark

    def _rated_reads_mark(self, layers: Sequence[int]) -> tuple[int, int]:
        count, latest = self._query(
            f"SELECT COUNT(*), MAX(rated_at) FROM reads WHERE {in_list('scope_id', layers)}"
            " AND rated_at IS NOT NULL",
            layers,
        )[0]
        return int(count), int(latest or 0)

    @translated
    def rated_reads(
        self, scope: Scope, model: str, known: Collection[str]
    ) -> tuple[list[str], dict[str, bytes]]:
        layers = self._layers(scope)
        if not layers or self._empty("read_lessons"):
            return [], {}
        ids = [
            read_id
            for (read_id,) in self._query(
                f"SELECT id FROM reads WHERE {in_list('scope_id', layers)}"
                " AND rated_at IS NOT NULL AND model = ? AND vector IS NOT NULL ORDER BY id",
                [*layers, model],
            )
        ]
        fresh = [read_id for read_id in ids if read_id not in known]
        vectors = {
            read_id: bytes(vector)
            for read_id, vector in self._query_in(
                "SELECT id, vector FROM reads WHERE id IN (?*)", fresh
            )
        }
        return ids, vectors

    @translated
    def read_lessons(
        self, read_ids: Sequence[str]
    ) -> dict[str, tuple[tuple[str, ...], list[tuple[int, float]]]]:
        found: dict[str, tuple[tuple[str, ...], list[tuple[int, float]]]] = {}
        for read_id, concepts, seq, weight in self._query_in(
            "SELECT r.id, r.concepts, l.memory_seq, l.weight FROM reads r"
            " LEFT JOIN read_lessons l ON l.read_id = r.id WHERE r.id IN (?*)"
            " ORDER BY r.id, l.memory_seq",
            read_ids,
        ):
            if read_id not in found:
                found[read_id] = (tuple(json.loads(concepts)), [])
            if seq is not None:
                found[read_id][1].append((int(seq), float(weight)))
        return found

    @translated
    def learned_precedents(self, scope: Scope) -> list[LearnedPrecedent]:
        layers = self._layers(scope)
        if not layers:
            return []
        with self.snapshot():
            reads = self._query(
                "SELECT id, concepts, model, vector FROM reads"
                f" WHERE {in_list('scope_id', layers)} AND rated_at IS NOT NULL"
                " AND vector IS NOT NULL ORDER BY id",
                layers,
            )
            taught: dict[str, list[tuple[str, float, int]]] = {}
            for read_id, memory_id, weight, outcomes in self._query_in(
                "SELECT l.read_id, m.id, l.weight, l.outcomes FROM read_lessons l"
                " JOIN memories m ON m.seq = l.memory_seq"
                f" WHERE l.read_id IN (?*) AND {in_list('m.scope_id', layers)}"
                " ORDER BY l.read_id, m.seq",
                [read_id for read_id, *_ in reads],
                after=layers,
            ):
                taught.setdefault(read_id, []).append((memory_id, float(weight), int(outcomes)))
        return [
            LearnedPrecedent(read_id, tuple(json.loads(c)), model, bytes(v), tuple(taught[read_id]))
            for read_id, c, model, v in reads
            if read_id in taught
        ]

    @translated
    def restore_precedents(self, scope: Scope, rows: Sequence[LearnedPrecedent]) -> list[bool]:
        """Whether each precedent was restored (False: none of its memories is here).
        A precedent takes the exported state, so importing it twice changes nothing."""
        at = times.to_micros(times.now())
        kept = []
        with self.transaction():
            layer = self._own_layer(scope)
            for row in rows:
                seqs = self.own_seqs(scope, [memory_id for memory_id, _, _ in row.taught])
                if not seqs:
                    kept.append(False)
                    continue
                self._conn.execute(
                    "INSERT INTO reads (id, scope_id, at, concepts, model, vector, rated_at)"
                    " VALUES (?,?,?,?,?,?,?) ON CONFLICT (id) DO NOTHING",
                    [row.read_id, layer, at, json.dumps(list(row.concepts)), row.model,
                     row.vector, at],
                )  # fmt: skip
                self._conn.executemany(
                    "INSERT INTO read_lessons (read_id, memory_seq, weight, outcomes, updated_at)"
                    " VALUES (?,?,?,?,?) ON CONFLICT (read_id, memory_seq) DO UPDATE SET"
                    " weight = excluded.weight, outcomes = excluded.outcomes",
                    [(row.read_id, seqs[m], w, n, at) for m, w, n in row.taught if m in seqs],
                )
                kept.append(True)
        return kept

    def forget_reads(self, seq: int, layer: int) -> None:
        """Delete the reads that returned the memory or were taught it: what they
        asked was answered by it, and would outlive it otherwise."""
        doomed = sorted(
            {read_id for (read_id,) in self._query(
                "SELECT r.id FROM read_items i JOIN reads r ON r.seq = i.read_seq"
                " WHERE i.memory_seq = ?"
                " UNION SELECT read_id FROM read_lessons WHERE memory_seq = ?",
                [seq, seq],
            )}
        )  # fmt: skip
        self._delete_reads(doomed)

    part = StorePart(
        "reads",
        on_init=init_reads,
        on_begin=write_queued_reads,
        on_commit=drop_written_reads,
        on_close=keep_queued_reads,
        on_forget=forget_reads,
        empty_checked=("read_lessons",),
        forget_tables=("reads", "read_items", "read_lessons"),
    )


def _bytes(value: object) -> bytes | None:
    """A BLOB / BYTEA column as bytes (PostgreSQL may hand back a memoryview)."""
    return None if value is None else bytes(value)  # type: ignore[call-overload]
