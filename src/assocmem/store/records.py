"""Memory records in SQL: the write (insert, deduplication, supersession, concepts),
hydration of records, the access clock, the scan and the counts.

A read restarts the decay clocks of what it returned without writing: the new clocks
wait in the process, as the read itself does (links/store_reads.py), and the next
write transaction writes them as it begins, or the store as it closes. Records this
process reads carry them at once; another process sees them once written.

A mixin of `SQLStore`. Invariants: a write is one transaction in which the memory,
its concepts, vector and co-occurrence counts land together or not at all; a
refused duplicate writes nothing, not even to the record it duplicates; one
active record holds a key per scope layer, that is per access class (a unique
index), so a restricted value never retires a plain one nor the reverse; a new
value retires the current one only once it is itself stored; and a result
names only records the writer can read.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from assocmem.errors import AssocmemError
from assocmem.schema import NewMemory
from assocmem.store.connection import SQLConnection, access_key, readable_by
from assocmem.store.params import KEYED, chunked, in_list, translated
from assocmem.store.parts import Written
from assocmem.store.protocol import RankFields, Store, View, new_id
from assocmem.store.rows import SAME_AS_NAME, read_form, stored_form
from assocmem.text import times
from assocmem.types import Record, Scope, Stats, WriteResult

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

# Restarted clocks waiting in a process for its next write; past this many they are
# written at once, in a transaction of their own.
CLOCKS_QUEUED_MAX = 10_000

_Clocked = TypeVar("_Clocked", Record, RankFields)

MEMORY_COLUMNS = (
    "seq, id, agent_id, project_id, channel, text, kind, tags, value, meta, source, "
    "observed_at, version, verified_at, verification_scope, recheck_by, confidence, access, "
    "key_subject, key_relation, derived_from, status, protected, valence, created_at, "
    "author, thread, accessed_at, task, source_canonical"
)


def _names_and_forms(memory: NewMemory) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A memory's concept names and, in the same order, the forms it wrote them in."""
    if not memory.concepts:
        return (), ()
    names, forms = zip(*memory.concepts, strict=True)
    return names, forms


def _json_list(values: Sequence[str]) -> str:
    return json.dumps(list(values), ensure_ascii=False) if values else "[]"


class MemoryRecords(SQLConnection):
    """The memory records of the SQL store (mixed into `SQLStore`)."""

    # Where `touch` sends the access clock; None: this store's own connection.
    _clock: Store | None = None

    def _init_state(self) -> None:
        super()._init_state()
        # Restarted clocks not yet written (memory id -> when), oldest first, and those
        # the open write transaction wrote: they leave the queue once it commits.
        self._clocks_lock = threading.Lock()
        self._clocks: dict[str, str] = {}
        self._clocks_writing: dict[str, str] = {}

    # -- writes ---------------------------------------------------------------

    @translated
    def write(
        self, scope: Scope, memories: Sequence[NewMemory], vectors: np.ndarray | None = None
    ) -> list[WriteResult]:
        now = times.now()
        with self.transaction():
            layers: dict[str, int] = {}
            placed = []
            for memory in memories:
                access = access_key(memory.access)
                if access not in layers:
                    layers[access] = self._own_layer(scope, memory.access)
                placed.append(layers[access])
            inserted = (
                self._insert_many(scope, placed, memories, now)
                if len(memories) > 1 and not any(memory.key for memory in memories)
                else [
                    self._insert_memory(scope, layer, memory, now)
                    for layer, memory in zip(placed, memories, strict=True)
                ]
            )
            results, stored, rows = [], [], []
            for i, (memory, layer, (result, seq)) in enumerate(
                zip(memories, placed, inserted, strict=True)
            ):
                results.append(result)
                if seq is not None:
                    stored.append((seq, layer, memory))
                    rows.append((seq, layer, None if vectors is None else vectors[i]))
            ids = self.intern_concepts([n for _, _, m in stored for n, _ in m.concepts])
            self._conn.executemany(
                "INSERT INTO memory_concepts (scope_id, concept_id, memory_seq, position, form)"
                " VALUES (?,?,?,?,?)",
                [
                    (layer, ids[name], seq, pos, stored_form(name, form))
                    for seq, layer, memory in stored
                    for pos, (name, form) in enumerate(memory.concepts)
                ],
            )
            written = [
                Written(seq, layer, [ids[n] for n, _ in memory.concepts], vector)
                for (seq, layer, vector), (_, _, memory) in zip(rows, stored, strict=True)
            ]
            for on_write in self.hooks("on_write"):
                on_write(self, written, times.to_micros(now))
            return results

    def _insert_memory(
        self, scope: Scope, layer: int, memory: NewMemory, now: str
    ) -> tuple[WriteResult, int | None]:
        memory_id = new_id()
        current = self._current_for_key(layer, memory) if memory.key else None
        history = current is not None and memory.observed_at < current[1]
        # One record is active per key (a unique index): a new value is inserted as
        # superseded and made current only once stored, so a refused duplicate
        # touches nothing.
        supersedes = current is not None and not history
        row = self._conn.execute(
            INSERT_WRITTEN,
            (
                *memory_values(memory_id, layer, scope, memory, now),
                "superseded" if current else "active", current[0] if history and current else None,
            ),
        ).fetchone()  # fmt: skip
        if row is not None:
            names, forms = _names_and_forms(memory)
            if history:
                return WriteResult(
                    id=memory_id,
                    stored=True,
                    concepts=names,
                    concept_forms=forms,
                    reason="history: a later observation holds this key",
                ), row[0]
            if current and supersedes:
                self._conn.execute(
                    "UPDATE memories SET status = 'superseded', superseded_by = ? WHERE seq = ?",
                    (row[0], current[0]),
                )
                self._conn.execute("UPDATE memories SET status = 'active' WHERE seq = ?", (row[0],))
            # The retired record is in the writer's class; a writer outside that class
            # (writing for roles it lacks) is not told which record it was.
            readable = readable_by(access_key(memory.access), scope.role)
            retired = (current[2],) if current and readable else ()
            return WriteResult(id=memory_id, stored=True, concepts=names, concept_forms=forms,
                               superseded=retired), row[0]  # fmt: skip
        (existing,) = self._conn.execute(
            "SELECT id FROM memories WHERE scope_id = ? AND observed_at = ? AND dedupe_key = ?",
            (layer, memory.observed_at, memory.dedupe_key),
        ).fetchone()
        return WriteResult(id=existing, stored=False, reason="duplicate"), None

    def _insert_many(
        self, scope: Scope, layers: Sequence[int], memories: Sequence[NewMemory], now: str
    ) -> list[tuple[WriteResult, int | None]]:
        """`_insert_memory` for a batch of memories without a key, in three statements:
        the observations already stored, the batch's seqs, and one executemany. Inside
        the write transaction no other writer can store or number one meanwhile; a
        repeat within the batch is a duplicate of its first, as one by one."""
        held = self._stored_observations(list(zip(layers, memories, strict=True)))
        fresh: list[tuple[str, int, NewMemory]] = []
        for layer, memory in zip(layers, memories, strict=True):
            basis = (layer, memory.observed_at, memory.dedupe_key)
            if basis not in held:
                held[basis] = new_id()
                fresh.append((held[basis], layer, memory))
        numbers = self._next_seqs(len(fresh))
        seqs = {memory_id: seq for (memory_id, _, _), seq in zip(fresh, numbers, strict=True)}
        self._conn.executemany(
            INSERT_NUMBERED,
            [
                (seqs[memory_id], *memory_values(memory_id, layer, scope, memory, now), "active")
                for memory_id, layer, memory in fresh
            ],
        )
        results: list[tuple[WriteResult, int | None]] = []
        for layer, memory in zip(layers, memories, strict=True):
            memory_id = held[(layer, memory.observed_at, memory.dedupe_key)]
            seq = seqs.pop(memory_id, None)  # the first of repeats takes it
            if seq is None:
                results.append((WriteResult(id=memory_id, stored=False, reason="duplicate"), None))
                continue
            names, forms = _names_and_forms(memory)
            results.append(
                (WriteResult(id=memory_id, stored=True, concepts=names, concept_forms=forms), seq)
            )
        return results

    def _stored_observations(
        self, batch: Sequence[tuple[int, NewMemory]]
    ) -> dict[tuple[int, str, str], str]:
        """The id stored under each (layer, observed_at, dedupe_key) of ``batch``."""
        found: dict[tuple[int, str, str], str] = {}
        bases = dict.fromkeys((layer, m.observed_at, m.dedupe_key) for layer, m in batch)
        for chunk in chunked(list(bases)):
            # The batch's rows are the outer loop, each a lookup in the unique index
            # (SQLite plans a row-value IN over VALUES as a scan of every memory).
            rows = self._query(
                "SELECT m.scope_id, m.observed_at, m.dedupe_key, m.id"
                f" FROM (VALUES {', '.join(['(?, ?, ?)'] * len(chunk))}) AS batch"
                " JOIN memories m ON m.scope_id = batch.column1"
                " AND m.observed_at = batch.column2 AND m.dedupe_key = batch.column3",
                [value for basis in chunk for value in basis],
            )
            found.update(((layer, at, key), id_) for layer, at, key, id_ in rows)
        return found

    def _next_seqs(self, count: int) -> list[int]:
        """The seqs the next ``count`` memories take (inside the write transaction)."""
        (last,) = self._conn.execute("SELECT COALESCE(MAX(seq), 0) FROM memories").fetchone()
        return list(range(int(last) + 1, int(last) + 1 + count))

    def _current_for_key(self, layer: int, memory: NewMemory) -> tuple[int, str, str] | None:
        """The active record holding ``memory``'s key in its layer (its scope and access
        class): (seq, observed_at, id)."""
        assert memory.key is not None
        row = self._conn.execute(
            "SELECT seq, observed_at, id FROM memories WHERE scope_id = ? AND key_subject = ?"
            " AND key_relation = ? AND status = 'active'",
            (layer, *memory.key),
        ).fetchone()
        return (int(row[0]), str(row[1]), str(row[2])) if row else None

    @translated
    def intern_concepts(self, names: Sequence[str]) -> dict[str, int]:
        self._check_concept_cache()
        cache, pending = self._concept_cache, self._pending_concepts
        missing = [n for n in dict.fromkeys(names) if n not in cache and n not in pending]
        if missing:
            # Idempotent inserts: a step that fails halfway leaves only names a later
            # call finds, so inside a write it needs no savepoint of its own.
            with self._atomic_step():
                for chunk in chunked(missing):
                    # The new names come back with their ids, in the order given (as
                    # one insert per name would number them); a name another
                    # connection stored meanwhile is looked up.
                    created = self._conn.execute(
                        "INSERT INTO concepts (name) VALUES"
                        f" {', '.join(['(?)'] * len(chunk))}"
                        " ON CONFLICT DO NOTHING RETURNING name, id",
                        chunk,
                    ).fetchall()
                    pending.update(created)
                    if len(created) < len(chunk):
                        found = [n for n in chunk if n not in pending]
                        pending.update(self._lookup_concepts(found))
        return {n: cache[n] if n in cache else pending[n] for n in names}

    def _lookup_concepts(self, names: Sequence[str]) -> dict[str, int]:
        return dict(
            self._query_in(KEYED + "SELECT name, id FROM concepts WHERE name IN (?*)", names)
        )

    # -- reads ----------------------------------------------------------------

    @translated
    def records(self, scope: Scope, ids: Sequence[str]) -> list[Record]:
        by_id = {
            r.id: r
            for r in self.records_by_seq(list(self.visible_seqs(scope, ids).values())).values()
        }
        return [by_id[i] for i in ids if i in by_id]

    @translated
    def visible_seqs(
        self, scope: Scope, ids: Sequence[str], statuses: Sequence[str] = ("active",)
    ) -> dict[str, int]:
        layers = self._layers(scope)
        if not layers:
            return {}
        return dict(
            self._query_in(
                f"SELECT id, seq FROM memories WHERE {in_list('scope_id', layers)}"
                f" AND {in_list('status', statuses)} AND id IN (?*)",
                ids,
                before=[*layers, *statuses],
            )
        )

    @translated
    def rank_fields(self, seqs: Sequence[int]) -> dict[int, RankFields]:
        found = self._per_seq("rank fields", seqs, self._rank_fields)
        return self._with_clocks("rank fields", found)

    def _rank_fields(self, seqs: Sequence[int]) -> dict[int, RankFields]:
        rows = self._query_in(
            KEYED + "SELECT seq, id, kind, value, valence, observed_at, accessed_at, text,"
            " derived_from != '[]' FROM memories WHERE seq IN (?*)",
            seqs,
        )
        return {
            seq: RankFields(id_, kind, value, valence, observed, accessed, text, bool(derived))
            for seq, id_, kind, value, valence, observed, accessed, text, derived in rows
        }

    @translated
    def keyed_records(self, view: View, limit: int) -> list[Record]:
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        rows = self._query(
            f"SELECT m.seq FROM memories m WHERE {where} AND {self._meta_is_array('m', 'key')}"
            f" AND {self._meta_is_array('m', 'value')} ORDER BY m.seq LIMIT ?",
            [*params, limit],
        )
        found = self.records_by_seq([seq for (seq,) in rows])
        return [found[seq] for (seq,) in rows]

    @translated
    def records_by_seq(self, seqs: Sequence[int]) -> dict[int, Record]:
        return self._with_clocks("records", self._per_seq("records", seqs, self._records_by_seq))

    def _with_clocks(self, key: str, found: dict[int, _Clocked]) -> dict[int, _Clocked]:
        """``found`` (a dict of its own, `_per_seq`'s under ``key``) with the clocks this
        process restarted and has not written yet; the read memo keeps what it gets,
        so a record is copied once per restart, not once per read."""
        # A reader connection's clocks wait in the writer that keeps them.
        clocks = (self._clock if isinstance(self._clock, MemoryRecords) else self)._clocks
        if not clocks:
            return found
        memo = self._memo(("per seq", key))
        for seq, row in found.items():
            when = clocks.get(row.id)
            if when is not None and when != row.accessed_at:
                found[seq] = row = replace(row, accessed_at=when)
                if memo is not None:
                    memo[seq] = row
        return found

    def _records_by_seq(self, seqs: Sequence[int]) -> dict[int, Record]:
        # Each record's concepts come in the same statement, as a JSON array of
        # [name, form] pairs in position order; each name looked up by its key, as
        # PostgreSQL's version does (`PostgresStore._records_by_seq`): as a join, it
        # hashed the whole concepts table (a vocabulary's worth of rows).
        rows = self._query_in(
            f"{KEYED}SELECT {MEMORY_COLUMNS}, (SELECT json_group_array(json_array(name, form))"
            " FROM (SELECT (SELECT c.name FROM concepts c WHERE c.id = mc.concept_id) AS name,"
            " mc.form FROM memory_concepts mc WHERE mc.memory_seq = memories.seq"
            " ORDER BY mc.position)) FROM memories WHERE seq IN (?*)",
            seqs,
        )
        return {
            row[0]: record_from_row(
                row[:-1], [(name, read_form(name, form)) for name, form in json.loads(row[-1])]
            )
            for row in rows
        }

    @translated
    def concept_ids(self, names: Sequence[str]) -> dict[str, int]:
        self._check_concept_cache()
        # Names found in no concept are remembered as such while the store is unchanged
        # (a read asks for its question's words and compounds, most of them unknown).
        absent = self._memo(("no concept",))
        missing = [
            n for n in names if n not in self._concept_cache and not (absent and n in absent)
        ]
        if missing:
            found = self._lookup_concepts(missing)
            self._concept_cache.update(found)
            if absent is not None:
                absent.update(dict.fromkeys(n for n in missing if n not in found))
        return {n: self._concept_cache[n] for n in names if n in self._concept_cache}

    @translated
    def concept_names(self, ids: Sequence[int]) -> dict[int, str]:
        return self._names_by_id(ids)

    @translated
    def concept_forms(
        self, scope: Scope, concept_ids: Sequence[int], per_layer: int
    ) -> dict[int, dict[str, int]]:
        layers = self._layers(scope)
        return self._per_seq(
            ("concept forms", tuple(layers), per_layer),
            concept_ids,
            lambda ids: self._concept_forms(layers, ids, per_layer),
        )

    def _concept_forms(
        self, layers: Sequence[int], concept_ids: Sequence[int], per_layer: int
    ) -> dict[int, dict[str, int]]:
        # A part per concept and layer, each an index range of the primary key cut by
        # its LIMIT, so a concept used a million times costs what one used rarely does.
        keys = [(c, layer) for c in dict.fromkeys(concept_ids) for layer in layers]
        parts = [
            ("SELECT {n}, form, COUNT(*) FROM (SELECT form FROM memory_concepts"
             " WHERE scope_id = ? AND concept_id = ? ORDER BY memory_seq DESC LIMIT ?)"
             " AS uses{n} GROUP BY form",
             [layer, concept, per_layer])
            for concept, layer in keys
        ]  # fmt: skip
        counts: dict[int, dict[str, int]] = {}
        for index, (form, uses) in self._union(parts):
            forms = counts.setdefault(keys[index][0], {})
            forms[form] = forms.get(form, 0) + int(uses)
        named = [c for c, forms in counts.items() if SAME_AS_NAME in forms]
        for concept, name in self._names_by_id(named).items():
            forms = counts[concept]
            forms[name] = forms.get(name, 0) + forms.pop(SAME_AS_NAME)
        return counts

    @translated
    def concepts_of(self, seqs: Sequence[int]) -> dict[int, list[int]]:
        result: dict[int, list[int]] = {}
        for seq, concept in self._query_in(
            "SELECT memory_seq, concept_id FROM memory_concepts"
            " WHERE memory_seq IN (?*) ORDER BY memory_seq, position",
            seqs,
        ):
            result.setdefault(seq, []).append(concept)
        return result

    def touch(self, ids: Sequence[str], when: str) -> None:
        if self._clock is not None:
            self._clock.touch(ids, when)
            return
        if self.read_only:  # it reads with its clocks as they are
            return
        with self._clocks_lock:
            for memory_id in ids:
                self._clocks.pop(memory_id, None)  # to the end: the newest
                self._clocks[memory_id] = when
            full = len(self._clocks) > CLOCKS_QUEUED_MAX
        if full and self._depth == 0:
            if self._may_write_clocks():
                self.write_queued()
            with self._clocks_lock:  # not written (a reader pins the WAL): the oldest go
                while len(self._clocks) > CLOCKS_QUEUED_MAX:
                    del self._clocks[next(iter(self._clocks))]

    def write_queued(self) -> None:
        """Write now what this process keeps for its next write transaction: the
        restarted clocks, and what the parts queue (the reads kept as handles)."""
        if not self.read_only:
            with self.transaction():
                pass  # `_on_begin` writes it

    def _may_write_clocks(self) -> bool:
        """Whether a transaction of the clocks' own would not wait on a reader."""
        return True

    def _on_begin(self) -> None:
        with self._clocks_lock:
            self._clocks_writing = dict(self._clocks)
        if self._clocks_writing:
            self._conn.executemany(
                "UPDATE memories SET accessed_at = ? WHERE id = ?",
                [(when, memory_id) for memory_id, when in self._clocks_writing.items()],
            )
        super()._on_begin()

    def _on_commit(self) -> None:
        with self._clocks_lock:
            for memory_id, when in self._clocks_writing.items():
                if self._clocks.get(memory_id) == when:  # no later read moved it again
                    del self._clocks[memory_id]
            self._clocks_writing = {}
        super()._on_commit()

    def _close_parts(self) -> None:
        super()._close_parts()  # a part's closing transaction writes the clocks too
        if self._clocks:
            try:
                self.write_queued()
            except AssocmemError as exc:
                log.warning("restarted clocks not kept at close: %s", exc)

    def keep_access_clock_in(self, writer: Store) -> None:
        self._clock = writer

    @translated
    def scan(self, scope: Scope, *, after: int, limit: int) -> list[tuple[int, Record]]:
        layers = self._layers(scope)
        if not layers:
            return []
        seqs = [
            seq
            for (seq,) in self._query(
                f"SELECT seq FROM memories WHERE {in_list('scope_id', layers)}"
                " AND status = 'active' AND seq > ? ORDER BY seq LIMIT ?",
                [*layers, after, limit],
            )
        ]
        found = self.records_by_seq(seqs)
        return [(seq, found[seq]) for seq in seqs]

    def own_seqs(self, scope: Scope, ids: Sequence[str]) -> dict[str, int]:
        """The seqs of ``scope``'s own memories with these ids, in any of its access
        classes (by the record's own columns: a layer made earlier in the open
        transaction is not yet among `_layers`); an import restores what refers to them."""
        if not ids:
            return {}
        projects, channels = scope.readable_projects, scope.readable_channels
        return dict(
            self._query_in(
                "SELECT id, seq FROM memories WHERE agent_id = ?"
                f" AND {in_list('project_id', projects)} AND {in_list('channel', channels)}"
                " AND id IN (?*)",
                ids,
                before=[scope.agent_id, *projects, *channels],
            )
        )

    @translated
    def stats(self, scope: Scope) -> Stats:
        layers = self._layers(scope)
        if not layers:
            return Stats(0, 0, 0, 0, {}, {})
        where = in_list("scope_id", layers)
        by_kind: dict[str, int] = {}
        by_status: dict[str, int] = {}
        for kind, status, n in self._query(
            f"SELECT kind, status, COUNT(*) FROM memories WHERE {where} GROUP BY kind, status",
            layers,
        ):
            by_kind[kind] = by_kind.get(kind, 0) + n
            by_status[status] = by_status.get(status, 0) + n

        (concepts,) = self._query(
            f"SELECT COUNT(DISTINCT concept_id) FROM memory_concepts WHERE {where}", layers
        )[0]
        # What the parts count (links, the feedback log), after the engine's own counts.
        counts = {
            name: n
            for stats in self.hooks("stats")
            for name, n in stats(self, where, layers).items()
        }
        return Stats(
            memories=sum(by_kind.values()),
            concepts=int(concepts),
            links=counts.get("links", 0),
            feedback=counts.get("feedback", 0),
            by_kind=by_kind,
            by_status=by_status,
        )


def record_from_row(row: Sequence[Any], concepts: list[tuple[str, str]]) -> Record:
    (
        _seq, id_, agent, project, channel, text, kind, tags, value, meta, source, observed,
        version, verified, vscope, recheck, confidence, access, key_s, key_r, derived, status,
        protected, valence, created, author, thread, accessed, task, canonical,
    ) = row  # fmt: skip
    return Record(
        id=id_,
        text=text,
        agent_id=agent,
        project_id=project,
        channel=channel,
        kind=kind,
        concepts=tuple(name for name, _ in concepts),
        concept_forms=tuple(form for _, form in concepts),
        tags=tuple(json.loads(tags)),
        value=value,
        meta=json.loads(meta),
        source=source,
        observed_at=observed,
        version=version,
        verified_at=verified,
        verification_scope=vscope,
        recheck_by=recheck,
        confidence=confidence,
        access=tuple(json.loads(access)),
        key=(key_s, key_r) if key_s is not None else None,
        derived_from=tuple(json.loads(derived)),
        status=status,
        protected=bool(protected),
        valence=valence,
        created_at=created,
        author=author,
        thread=thread,
        accessed_at=accessed,
        task=task,
        source_canonical=canonical,
    )


# The columns every inserted memory fills, in the order `memory_values` gives them; a
# writer adds its own (status, supersession, learned state) after them.
_INSERT_COLUMNS = (
    "id", "scope_id", "agent_id", "project_id", "channel", "text", "kind", "tags", "value",
    "meta", "source", "observed_at", "version", "verified_at", "verification_scope",
    "recheck_by", "confidence", "access", "key_subject", "key_relation", "derived_from",
    "protected", "author", "thread", "fingerprint", "dedupe_key", "created_at", "task",
    "source_canonical",
)  # fmt: skip


def insert_memory_sql(*extra: str) -> str:
    """The INSERT of one memory with ``extra`` columns after the common ones; a repeat
    of a stored observation inserts nothing and returns no row."""
    columns = (*_INSERT_COLUMNS, *extra)
    return (
        f"INSERT INTO memories ({', '.join(columns)}) VALUES ({','.join('?' * len(columns))})"
        " ON CONFLICT (scope_id, observed_at, dedupe_key) DO NOTHING RETURNING seq"
    )


def memory_values(
    memory_id: str, layer: int, scope: Scope, memory: NewMemory, created_at: str
) -> tuple[Any, ...]:
    """The values of `_INSERT_COLUMNS` for one memory."""
    return (
        memory_id, layer, scope.agent_id, scope.project_id, scope.channel, memory.text,
        memory.kind, _json_list(memory.tags), memory.value, memory.meta_json,
        memory.source, memory.observed_at, memory.version, memory.verified_at,
        memory.verification_scope, memory.recheck_by, memory.confidence,
        _json_list(memory.access), memory.key[0] if memory.key else None,
        memory.key[1] if memory.key else None, _json_list(memory.derived_from),
        int(memory.protected), memory.author, memory.thread, memory.fingerprint,
        memory.dedupe_key, created_at, memory.task, memory.source_canonical,
    )  # fmt: skip


INSERT_WRITTEN = insert_memory_sql("status", "superseded_by")
# A batch's memories, numbered beforehand (`_insert_many`).
INSERT_NUMBERED = (
    f"INSERT INTO memories (seq, {', '.join(_INSERT_COLUMNS)}, status)"
    f" VALUES ({','.join('?' * (len(_INSERT_COLUMNS) + 2))})"
)
