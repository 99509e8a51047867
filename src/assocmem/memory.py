"""`Memory`: the public API. Validates arguments, then calls the engine modules.

The core operations (write, read, the declared graph, lifecycle, learning) are here; the
groups a capability adds (the vault, trust, consolidation, procedures) are mixins under
`operations/`, composed by the class.

Invariant: every public method either completes or raises an `AssocmemError`
having changed nothing; a batch write keeps its valid items and reports the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import replace
from datetime import datetime
from functools import partial
from itertools import zip_longest
from types import TracebackType
from typing import Any

import assocmem.trust.receipts
from assocmem.capabilities import Parts, open_store
from assocmem.consolidate.operations import ConsolidationOperations
from assocmem.errors import AssocmemError, InvalidInput, OperatorRequired, UnknownMemory
from assocmem.graph import declare, reconstruct, traverse
from assocmem.graph.operator import check_declarer, check_removal
from assocmem.graph.types import Reconstruction, Traversal
from assocmem.inspect.operations import InspectionOperations  # inspection (dashboard)
from assocmem.lifecycle import contradictions, retention, status
from assocmem.lifecycle.types import Contradiction, Lifecycle
from assocmem.links import hebbian, reinforce
from assocmem.links.types import FeedbackResult, Graph
from assocmem.operations.base import checked_arguments
from assocmem.portable.operations import ComfortOperations
from assocmem.procedures.gate import workflow_candidate
from assocmem.procedures.operations import ProcedureOperations
from assocmem.recall import filters, pipeline, profiles, request, soft
from assocmem.recall.profiles import GENERAL
from assocmem.schema import NewMemory
from assocmem.store import View
from assocmem.store.connection import SYNCHRONOUS
from assocmem.text.clean import check_clean
from assocmem.trust import convergence, slash, standing
from assocmem.trust.operations import TrustOperations
from assocmem.types import (
    KINDS,
    STATUSES,
    Declared,
    ReadResult,
    Record,
    Scope,
    SoftRead,
    Stats,
    WriteResult,
)
from assocmem.vault.operations import VaultOperations, resolved_roots
from assocmem.vectors.embedders import Embedder, load_embedder
from assocmem.vectors.space import VectorSpace
from assocmem.write import validate

MAX_BATCH = 10_000
EXPORT_PAGE = 500


class Memory(
    VaultOperations,
    TrustOperations,
    ConsolidationOperations,
    ProcedureOperations,
    InspectionOperations,
    ComfortOperations,
):
    """A long-term associative memory in one store, seen as one agent in one scope.

    Parameters:
        target: a SQLite file path (created if missing) or ``":memory:"``.
        agent_id: whose memory this is; an agent never sees another agent's records.
        project_id: the project bucket written to; reads also see the global pool ``""``.
        channel: the channel written to; reads also see the shared channel ``""``.
        embedder: an `Embedder`, a registered embedder name (``"minilm"``), or None
            (default) for no vector arm. A store remembers which model and width
            filled it and refuses another (`EmbedderMismatch`).
        role: the reader's role. A record written with ``access=[roles]`` is readable
            only in one of those roles, in every path (read, get, graph, traverse,
            feedback, soft_read); None reads only unrestricted records.
        synchronous: SQLite durability, ``"normal"`` (default) or ``"full"``.
        profile: the recall profile, ``"general"`` (default: rules that fit any store)
            or ``"conversation"`` (chat transcripts: speaker labels left out of the
            vectors, turns that end asking folded down, replies credited from what
            prompted them, dates stretched by a telling lag, reported-speech words
            kept out of the lexical terms). A read may choose another; the vectors
            reflect the profile they were written with.
        vault_roots: the folders `vault_index` may index (and `apply_links` write
            under); None (default) allows any folder the caller names. A server
            passes the operator's roots, so its clients cannot reach other folders.
        strict_corroboration: count as a corroborating origin only a verified
            attestation key (distinct keys, not distinct source strings).
        receipts: append a write receipt to the store's hash chain for every
            memory this `Memory` writes, in the write's transaction (see
            `verify_attribution`).
        receipt_key: an Ed25519 private key (object, 32 bytes or hex) signing each
            receipt; giving one turns receipts on. Keep it out of the store's reach:
            an unsigned chain can be recomputed by anyone who can rewrite the store.
        reinforce: let each read raise the value of what it returns, in proportion
            to how relevant the read found it (`links.reinforce`). Off by default:
            it makes identical reads drift.
    """

    def __init__(
        self,
        target: str = ":memory:",
        *,
        agent_id: str = "default",
        project_id: str = "",
        channel: str = "",
        embedder: Embedder | str | None = None,
        role: str | None = None,
        synchronous: str = "normal",
        profile: str = GENERAL.name,
        vault_roots: Sequence[str] | None = None,
        strict_corroboration: bool = False,
        receipts: bool = False,
        receipt_key: Any = None,
        reinforce: bool = False,
    ) -> None:
        check_clean(str(target), "target")
        self._vault_roots = resolved_roots(vault_roots)
        self._strict = validate.check_bool(strict_corroboration, "strict_corroboration")
        self._receipts, self._receipt_key = assocmem.trust.receipts.settings(receipts, receipt_key)
        self._reinforce = validate.check_bool(reinforce, "reinforce")
        self._operator = True  # the operator gate: a library caller owns its store
        if synchronous not in SYNCHRONOUS:
            raise InvalidInput(
                f"synchronous must be one of {', '.join(SYNCHRONOUS)}", field="synchronous"
            )
        self._profile = profiles.named(profile)
        self.scope = checked_scope(agent_id, project_id, channel, role)
        self._store: Parts = open_store(str(target), synchronous=synchronous)
        self._owns_store = True
        try:
            model = load_embedder(embedder) if isinstance(embedder, str) else embedder
            self._space = (
                VectorSpace.checked(self._store, model, self._profile)
                if model is not None
                else None
            )
        except BaseException:
            self._store.close()
            raise

    @classmethod
    def attached(
        cls,
        store: Parts,
        scope: Scope,
        space: VectorSpace | None = None,
        profile: str = GENERAL.name,
        vault_roots: Sequence[str] | None = None,
        strict_corroboration: bool = False,
        receipts: bool = False,
        receipt_key: Any = None,
        operator: bool = True,
    ) -> Memory:
        """A `Memory` seeing ``store`` as ``scope``, sharing an open store (a server
        serves many callers over one store) and, when given, a `VectorSpace` over its
        database; ``vault_roots``, ``strict_corroboration``, ``receipts`` and
        ``receipt_key`` as for the constructor. ``operator`` False (a served key
        without the operator role) refuses declaring as the operator and removing
        what it declared (`OperatorRequired`). Closing it leaves the store open."""
        memory = cls.__new__(cls)
        memory._vault_roots = resolved_roots(vault_roots)
        memory._profile = profiles.named(profile)
        memory.scope, memory._store = scope, store
        memory._space = space.with_profile(memory._profile) if space is not None else None
        memory._owns_store = False
        memory._strict = validate.check_bool(strict_corroboration, "strict_corroboration")
        memory._receipts, memory._receipt_key = assocmem.trust.receipts.settings(
            receipts, receipt_key
        )
        memory._reinforce = False  # a shared store's reads never drift
        memory._operator = validate.check_bool(operator, "operator")  # the operator gate
        return memory

    # -- lifecycle ------------------------------------------------------------

    def close(self) -> None:
        """Close the store (unless it was attached). Safe to call twice."""
        if self._owns_store:
            self._store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- writing --------------------------------------------------------------

    # Its fields are checked once, by `new_memory` (as each item of a batch is).
    @checked_arguments(*validate.WRITE_FIELDS)
    def write(
        self,
        text: str,
        *,
        concepts: Sequence[str] | None = None,
        kind: str = "episodic",
        tags: Sequence[str] | None = None,
        value: float = 1.0,
        meta: Mapping[str, Any] | None = None,
        source: str | None = None,
        observed_at: str | datetime | None = None,
        version: str | None = None,
        verified_at: str | datetime | None = None,
        verification_scope: str | None = None,
        recheck_by: str | datetime | None = None,
        confidence: float | None = None,
        access: Sequence[str] | None = None,
        key: Sequence[str] | None = None,
        derived_from: Sequence[str] | None = None,
        protected: bool = False,
        author: str | None = None,
        thread: str | None = None,
        task: str | None = None,
        associations: Mapping[str, Any] | None = None,
        attestation: Sequence[str] | None = None,
    ) -> WriteResult:
        """Store one memory and add co-occurrence to every pair of its concepts.

        ``concepts`` default to keywords extracted from ``text``. A write of an
        observation already stored (same text, kind, time, source and meta) is
        refused: ``stored`` is False, ``reason`` is ``"duplicate"`` and ``id`` names
        the existing record. Invalid arguments raise `InvalidInput`.

        ``associations`` declares entities (``{"name", "aliases"}``) the memory
        mentions and relations (``{"subject", "predicate", "object"}``, endpoints
        by entity name, ``mem:<id>``, or ``ep:<id>`` for an episodic memory, which
        is that memory) it evidences. A malformed or clashing
        declaration is dropped and reported in ``result.associations``; the memory
        is stored either way.

        Kinds: ``working`` (the task at hand; needs ``task``, read only for that
        task, cleared by `end_task`), ``episodic`` (something that happened, at a
        time; the default), ``semantic`` (a fact held true; the only kind evidence
        mode admits) and ``procedural`` (how to do something). A ``key`` of
        ``(subject, relation)`` retires the active memory holding it when this one
        was observed at the same time or later (``result.superseded``); an older
        observation is stored as history and does not win.

        ``attestation`` is ``(public_key_hex, signature_hex)``, the source's Ed25519
        signature over this text and its canonical source (`assocmem.attest`); one
        that does not verify is refused (`InvalidInput` naming ``attestation``).
        ``derived_from`` memories pass their sources on as taint.
        """
        fields = {
            "text": text, "concepts": concepts, "kind": kind, "tags": tags, "value": value,
            "meta": meta, "source": source, "observed_at": observed_at, "version": version,
            "verified_at": verified_at, "verification_scope": verification_scope,
            "recheck_by": recheck_by, "confidence": confidence, "access": access, "key": key,
            "derived_from": derived_from, "protected": protected, "author": author,
            "thread": thread, "task": task,
        }  # fmt: skip
        memory = validate.new_memory({k: v for k, v in fields.items() if v is not None})
        self._check_parents([memory])
        signed = self._attested([memory], [attestation])
        (result,) = self._store_memories([memory], [associations], signed)
        return result

    @checked_arguments("items")
    def write_many(self, items: Sequence[Mapping[str, Any]]) -> list[WriteResult]:
        """Store many memories in one transaction, one `WriteResult` per item, in order.

        Each item holds the keyword arguments of `write`. Invalid items are not
        stored: their result has ``stored=False``, the ``error`` type, the ``field``
        and the message as ``reason``. Valid items are stored all together or,
        if the store fails, not at all (the error is raised).
        """
        if isinstance(items, Mapping | str) or not isinstance(items, Iterable):
            raise InvalidInput("write_many takes a list of write dicts", field="items")
        results: list[WriteResult | None] = []
        checked: list[tuple[int, NewMemory, Any]] = []
        declared: dict[int, Any] = {}
        for position, item in enumerate(items):
            if position >= MAX_BATCH:
                raise InvalidInput(f"a batch holds at most {MAX_BATCH} items", field="items")
            try:
                if not isinstance(item, Mapping):
                    raise InvalidInput("each item must be a dict of write fields", field="items")
                fields = {k: v for k, v in item.items() if v is not None}
                if "associations" in fields:
                    declared[position] = fields.pop("associations")
                    check_clean(declared[position], "associations")
                attested = fields.pop("attestation", None)
                checked.append((position, validate.new_memory(fields), attested))
                results.append(None)
            except AssocmemError as exc:
                results.append(_refused(exc))
        # The parents every item names, looked up in one query rather than one per item.
        parents = sorted({p for _, memory, _ in checked for p in memory.derived_from})
        readable = self._store.visible_seqs(self.scope, parents) if parents else {}
        valid: list[tuple[int, NewMemory]] = []
        signed: dict[int, tuple[str, str] | None] = {}
        for position, memory, attested in checked:
            try:
                self._check_parents([memory], readable)
                if attested is not None:
                    signed[position] = self._attested([memory], [attested])[0]
            except AssocmemError as exc:
                results[position] = _refused(exc)
                continue
            valid.append((position, memory))
        if valid:
            stored = self._store_memories(
                [m for _, m in valid],
                [declared.get(position) for position, _ in valid],
                [signed.get(position) for position, _ in valid],
            )
            for (position, _), result in zip(valid, stored, strict=True):
                results[position] = result
        return [r for r in results if r is not None]

    def _store_memories(
        self,
        memories: Sequence[NewMemory],
        associations: Sequence[Any],
        signed: Sequence[tuple[str, str] | None] = (),
    ) -> list[WriteResult]:
        """Store ``memories`` with what each declares (``associations[i]``, or None) in
        one transaction: a crash leaves a memory with its declarations or neither."""
        # Embedding happens before the transaction: a model failure writes nothing.
        vectors = self._space.embed([(m.text, m.author) for m in memories]) if self._space else None
        # A write that records nothing beside the store's own rows is already one
        # transaction there; wrapping it would only add a savepoint to every write.
        plain = not self._receipts and all(
            a is None and s is None and not m.derived_from
            for m, a, s in zip_longest(memories, associations, signed)
        )
        with nullcontext() if plain else self._store.transaction():
            results = self._store.write(self.scope, memories, vectors)
            taints = self._standing_on_write(memories, results, signed)  # trust: taint, attests
            if self._receipts:  # trust: attribution
                assocmem.trust.receipts.append(
                    self._store, memories, results, taints, self._receipt_key
                )
            return [
                self._with_associations(result, memory, declared)
                for result, memory, declared in zip(results, memories, associations, strict=True)
            ]

    def _with_associations(
        self, result: WriteResult, memory: NewMemory, associations: Any
    ) -> WriteResult:
        """Declare a stored memory's associations (it is their anchor); report them.
        Each declaration is a savepoint of the write: one dropped takes back only itself."""
        if associations is None or not result.stored or result.id is None:
            return result
        # Found in a role its access names: a writer may write for roles it lacks.
        reader = replace(self.scope, role=memory.access[0]) if memory.access else self.scope
        anchor = self._store.visible_seqs(reader, [result.id])[result.id]
        declared = declare.declare(
            self._store, View(self.scope), associations, anchor=anchor, declared_by="agent"
        )
        return replace(result, associations=declared)

    def _check_parents(
        self, memories: Sequence[NewMemory], found: Mapping[str, int] | None = None
    ) -> None:
        """Refuse ``memories`` unless each parent they name is readable here: in
        ``found`` (the seqs of readable parents) where given, else looked up."""
        parents = sorted({p for m in memories for p in m.derived_from})
        if parents:
            if found is None:
                found = self._store.visible_seqs(self.scope, parents)
            for parent in parents:
                if parent not in found:
                    raise UnknownMemory(
                        f"derived_from names {parent!r}, which is not readable here",
                        record_id=parent,
                    )

    # -- reading --------------------------------------------------------------

    @checked_arguments()
    def read(
        self,
        query: str | None = None,
        *,
        concepts: Sequence[str] | None = None,
        k: int = 10,
        hops: int = 1,
        threshold: float = hebbian.DEFAULT_THRESHOLD,
        where: Mapping[str, Any] | None = None,
        prefer: Mapping[str, Any] | Sequence[Any] | None = None,
        prefer_trust: float | None = None,
        prefer_max_boost: float | None = None,
        kinds: Sequence[str] | None = None,
        explain: bool = True,
        as_of: str | datetime | None = None,
        mode: str = "recall",
        role: str | None = None,
        task: str | None = None,
        include_superseded: bool = False,
        profile: str | None = None,
        influence_only: bool = False,
        with_status: bool = False,
    ) -> ReadResult:
        """Recall the memories that matter for a question, each with the path that found it.

        Give a ``query`` text, ``concepts``, or both. A query runs every arm:
        lexical (BM25), semantic (when an embedder is attached), episodic (exact
        text), and the concept arms on its keywords; concepts alone run only the
        concept arms. Query concepts are expanded along learned links of weight ≥
        ``threshold`` for ``hops`` steps (0–3); memories reached only that way come
        back as ``hebbian_retrieval`` with their ``via`` links.

        ``where`` is a hard filter (field → value, list, or ``$gte $lte $gt $lt
        $in $nin $ne $contains``; columns first, then ``meta`` keys, which may be
        spelled ``meta.<key>``), applied before anything is ranked. A likely typo of
        a column, or a comparison a column's type can never meet, is refused.
        ``prefer`` is soft: one condition dict boosted by ``prefer_trust``, or a
        list of ``(dict, trust)``; boosts multiply and are capped by
        ``prefer_max_boost``. ``kinds`` limits the memory kinds;
        working memory is read only for its ``task``. ``as_of`` is the moment decay
        and verification are measured at (default now).

        ``mode`` picks the channels: ``"recall"`` (the default; ``"auto"`` is the
        same) runs every arm, the semantic ones where an embedder is attached;
        ``"lexical"`` reads by words and what they were taught, consulting no
        embedder; ``"semantic"`` by meaning alone, the embedder's nearest memories
        (it needs an embedder and a query). ``mode="evidence"`` returns only
        semantic memories from a named source whose verification is still valid at
        ``as_of`` (confidence never counts); it may return nothing, and ``gates``
        says which gate dropped what. ``role`` reads in
        another role than the memory's. Superseded values are left out unless
        ``include_superseded``. ``profile`` ranks by another recall profile than the
        memory's (``"general"`` or ``"conversation"``). ``influence_only`` returns only
        memories that earned standing (`standing`): gate what drives an action.
        ``with_status`` attaches each item's `convergence_report` as its ``status``
        (convergence-backed means independent origins agree, not that the claim is true).
        """
        validate.check_bool(influence_only, "influence_only")
        validate.check_bool(with_status, "with_status")
        asked = request.read_request(
            self.scope, query, concepts=concepts, k=k, hops=hops, threshold=threshold,
            where=where, prefer=prefer, prefer_trust=prefer_trust,
            prefer_max_boost=prefer_max_boost, kinds=kinds, explain=explain, as_of=as_of,
            mode=mode, role=role, task=task, include_superseded=include_superseded,
            profile=self._profile.name if profile is None else profile,
        )  # fmt: skip
        if influence_only:
            asked = replace(asked, influence_only=True, strict=self._strict)
        result = pipeline.read(self._store, asked, self._space)
        if self._reinforce:  # earned reinforcement, off by default
            ids = [item.id for item in result.items]
            reinforce.reinforce(
                self._store, self._store.visible_seqs(self.scope, ids, statuses=STATUSES), result
            )
        if with_status:  # trust: attribution
            return convergence.with_status(self._store, View(self.scope), result)
        return result

    @checked_arguments()
    def soft_read(
        self,
        query_key: Sequence[float],
        *,
        temperature: float = 1.0,
        where: Mapping[str, Any] | None = None,
    ) -> SoftRead:
        """An attention-style read over memories whose meta holds numeric ``key`` and ``value``.

        Weights are ``softmax(query_key · key / temperature)`` over the visible
        keyed memories; the result is their weighted ``value`` mixture, returned
        as a mixture with its weights, never as a record. Lower temperatures
        concentrate the weights; they do not verify the winner.
        """
        view = View(self.scope, conditions=filters.parse_where(where))
        return soft.soft_read(self._store, view, query_key, temperature)

    @checked_arguments()
    def get(self, ids: Sequence[str]) -> list[Record]:
        """The records with these ids, in order. Ids not readable here raise `UnknownMemory`."""
        wanted = validate.check_ids(ids)
        found = self._store.records(self.scope, wanted)
        missing = [i for i in wanted if i not in {r.id for r in found}]
        if missing:
            raise UnknownMemory(f"no memory {missing[0]!r} is readable here", record_id=missing[0])
        return list(standing.marked(self._store, dict(enumerate(found))).values())

    def export(self) -> Iterator[Record]:
        """Every readable record in this scope, oldest first (read page by page)."""
        after = 0
        while page := self._store.scan(self.scope, after=after, limit=EXPORT_PAGE):
            yield from (record for _, record in page)
            after = page[-1][0]

    # -- the declared graph ----------------------------------------------------

    @checked_arguments()
    def declare(
        self,
        associations: Mapping[str, Any],
        anchor_ref: str | None = None,
        declared_by: str = "agent",
    ) -> Declared:
        """Declare entities, aliases and relations after the fact.

        ``anchor_ref`` (``mem:<id>``, or ``ep:<id>`` for an episodic memory) names the
        memory that mentions the entities and evidences the relations. ``declared_by``
        is ``"agent"`` or ``"operator"``.
        Malformed or clashing declarations are dropped and reported.
        """
        if not isinstance(associations, Mapping):
            raise InvalidInput("associations must be a dict", field="associations")
        if anchor_ref is not None and not isinstance(anchor_ref, str):
            raise InvalidInput("anchor_ref must be a mem:<id> string", field="anchor_ref")
        view = View(self.scope)
        declarer = declare.check_declarer(declared_by)
        check_declarer(declarer, self._operator)  # the operator gate
        # The anchor found and declared on in one write transaction, as for `update`.
        with self._store.transaction():
            anchor = (
                declare.memory_seq(self._store, view, anchor_ref, "anchor_ref")
                if anchor_ref
                else None
            )
            return declare.declare(
                self._store, view, associations, anchor=anchor, declared_by=declarer
            )

    @checked_arguments()
    def retract(
        self,
        relation_ids: Sequence[int] = (),
        mentions: Sequence[tuple[str, str]] = (),
    ) -> dict[str, int]:
        """Remove declared relations (by id) and mentions (``(entity, "mem:<id>")``).

        Retraction is the only way a declaration leaves; returns how many went.
        """
        if (
            isinstance(relation_ids, str)
            or not isinstance(relation_ids, Iterable)
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in relation_ids)
        ):
            raise InvalidInput("relation_ids must be a list of integers", field="relation_ids")
        view = View(self.scope)
        if isinstance(mentions, str) or not isinstance(mentions, Iterable):
            raise InvalidInput("mentions must be (entity, mem:<id>) pairs", field="mentions")
        pairs = []
        for pair in mentions:
            if (
                not isinstance(pair, Sequence)
                or isinstance(pair, str)
                or len(pair) != 2
                or not all(isinstance(part, str) for part in pair)
            ):
                raise InvalidInput("mentions must be (entity, mem:<id>) pairs", field="mentions")
            seq = declare.memory_seq(self._store, view, pair[1])
            pairs += [(e.id, seq) for e in traverse.entities_named(self._store, view, pair[0])]
        with self._store.transaction():  # the operator gate and the removal, as one
            check_removal(
                self._store, self.scope, self._operator, relation_ids=list(relation_ids),
                mentions=pairs,
            )  # fmt: skip
            removed, unmentioned = self._store.retract(self.scope, list(relation_ids), pairs)
        return {"relations": removed, "mentions": unmentioned}

    @checked_arguments()
    def delete_entity(self, entity: str) -> int:
        """Delete every readable entity answering to ``entity`` with its aliases,
        mentions and relations; returns how many entities went."""
        with self._store.transaction():  # the operator gate and the removal, as one
            found = [e.id for e in traverse.entities_named(self._store, View(self.scope), entity)]
            check_removal(self._store, self.scope, self._operator, entity_ids=found)
            return self._store.delete_entities(self.scope, found)

    @checked_arguments()
    def forget(
        self, ids: Sequence[str] | None = None, where: Mapping[str, Any] | None = None
    ) -> int:
        """Delete memories for good, by ``ids`` or by a ``where`` filter: their rows,
        full-text and vector entries, mentions, the relations they anchor or join,
        feedback references, supersession pointers (the latest remaining value of a key
        becomes current again), the co-occurrence their writes added, and every learned
        link to a concept no remaining memory carries. What feedback taught a link
        between surviving concepts stays: it was learned from answers, not stored text.
        Ids not readable here raise `UnknownMemory`; returns how many were deleted.

        A ``where`` here names columns, and meta keys only spelled ``meta.<key>``: a
        bare unknown name is refused (`InvalidInput`), since a misspelt column would
        otherwise match, and delete, every memory lacking it."""
        seqs = self._select(ids, where, statuses=STATUSES)
        return self._store.delete_memories(self.scope, seqs)

    @checked_arguments()
    def end_task(self, task: str) -> int:
        """Clear the working memory of a task (deleted as by `forget`); returns how many."""
        view = View(self.scope, kinds=("working",), task=task, statuses=STATUSES)
        return self._store.delete_memories(self.scope, self._store.select(view, MAX_BATCH * 10))

    @checked_arguments()
    def archive(
        self, ids: Sequence[str] | None = None, where: Mapping[str, Any] | None = None
    ) -> Lifecycle:
        """Move memories out of default reads, reversibly; protected ones are skipped.
        A ``where`` spells meta keys ``meta.<key>``, as for `forget`."""
        with self._store.transaction():  # chosen and changed as one, as for `update`
            return status.archive(self._store, self._select(ids, where))

    @checked_arguments()
    def restore(self, ids: Sequence[str], scope: str | None = None) -> Lifecycle:
        """Bring archived memories back into reads, unchanged (and statements the dream
        pass's toggle guard superseded; a later pass leaves them).

        With ``scope`` (``"memory"`` or ``"source"``) it lifts a `slash` instead, of
        these memories or of everything sharing their source, bringing back the exact
        standing each had before it was first slashed. Lifting a slash is the
        operator's: a served key without that role may not undo the penalty on what its
        own agent wrote (`OperatorRequired`)."""
        chosen = None if scope is None else slash.check_scope(scope)
        if chosen is not None and not self._operator:
            raise OperatorRequired(
                "lifting a slash needs the operator role: it undoes the penalty on this"
                " key's own memories",
                field="scope",
            )
        with self._store.transaction():  # chosen and changed as one, as for `update`
            if chosen is not None:
                seqs = self._select(ids, None, statuses=STATUSES)
                return slash.lift(self._store, self._standing_view(), seqs, chosen)
            return status.restore(
                self._store, self._select(ids, None, statuses=("archived", "superseded"))
            )

    @checked_arguments()
    def protect(self, ids: Sequence[str], protected: bool = True) -> Lifecycle:
        """Shield memories from archiving (or lift the shield). It does not renew validity."""
        validate.check_bool(protected, "protected")
        with self._store.transaction():  # chosen and changed as one, as for `update`
            seqs = self._select(ids, None, statuses=STATUSES)
            return status.protect(self._store, seqs, protected)

    @checked_arguments()
    def history(self, key: Sequence[str]) -> list[Record]:
        """Every value a ``(subject, relation)`` key held, oldest observation first."""
        return status.history(self._store, View(self.scope), validate.check_key(key))

    def contradictions(self) -> list[Contradiction]:
        """Pairs flagged for review (one key, different values; near-identical claims of
        opposite polarity; one claim with a different value in one slot, "Paris is the
        capital of France" / "Lyon is the capital of France"). Nothing is edited or
        deleted."""
        return contradictions.contradictions(self._store, View(self.scope))

    @checked_arguments()
    def retain(self, policy: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Apply a retention policy given as data, ``{"rules": [...]}``: each rule a
        ``match`` filter (as ``where`` takes) and its actions, ``require`` (fields a match
        must carry), ``recheck_after_days``, ``protect``, ``archive_expired`` and
        ``propose_procedure``. There is no default policy: rules protect and archive, so
        only the caller's own apply. Returns a report per rule."""
        view = View(self.scope)
        propose = partial(workflow_candidate, self._store, view)
        return retention.retain(self._store, view, policy, propose)

    @checked_arguments()
    def resolve(self, entity: str, *predicates: str) -> list[str]:
        """Follow declared relations from ``entity`` through ``predicates`` in order
        (subject to object), exactly: ``resolve("demo-project", "uses", "major version")``."""
        return traverse.resolve(self._store, View(self.scope), entity, predicates)

    def _select(
        self,
        ids: Sequence[str] | None,
        where: Mapping[str, Any] | None,
        statuses: tuple[str, ...] = ("active",),
    ) -> list[int]:
        """Memories named by ids (all must be readable) or matched by ``where``."""
        if (ids is None) == (where is None):
            raise InvalidInput("give ids or where (one of them)", field="ids")
        if ids is not None:
            wanted = validate.check_ids(ids)
            seqs = self._store.visible_seqs(self.scope, wanted, statuses=statuses)
            missing = [i for i in wanted if i not in seqs]
            if missing:
                raise UnknownMemory(
                    f"no memory {missing[0]!r} is readable here", record_id=missing[0]
                )
            return [seqs[i] for i in wanted]
        # Only forget and archive select by where: a destructive filter spells meta keys.
        conditions = filters.parse_where(where, destructive=True)
        view = View(self.scope, statuses=statuses, kinds=KINDS, conditions=conditions)
        return self._store.select(view, MAX_BATCH * 10)

    @checked_arguments()
    def traverse(self, entity: str, max_hops: int = 1, limit: int = 20) -> Traversal:
        """An entity's neighbourhood: the entities related to it (either direction) out to
        ``max_hops`` (≤ 5), the relations between them and the readable records mentioning
        each, bounded by ``limit`` (≤ 100); what the bounds cut is counted."""
        traverse.check_bounds(max_hops, limit)
        return traverse.traverse(self._store, View(self.scope), entity, max_hops, limit)

    @checked_arguments()
    def reconstruct(
        self,
        query: str,
        *,
        count: int = 10,
        max_hops: int = 1,
        max_evidence: int = reconstruct.DEFAULT_MAX_EVIDENCE,
        as_of: str | datetime | None = None,
    ) -> Reconstruction:
        """Reconstructive recall: the items of a read, each with evidence reached through
        declared relations (``why="relation:<predicate>"``, ``hops``), bundles of records
        a declared record relation joins, and role-vocabulary relations as roles. With
        nothing declared it returns exactly the read's items. ``as_of`` is the moment the
        read measures decay at (default now): with it fixed, the same store answers the
        same call byte for byte."""
        traverse.check_bounds(max_hops, max_evidence, "max_evidence", reconstruct.MAX_EVIDENCE)
        asked = request.read_request(
            self.scope, query, k=count, profile=self._profile.name, as_of=as_of
        )
        return reconstruct.reconstruct(
            self._store, self._space, asked, max_hops=max_hops, max_evidence=max_evidence
        )

    # -- learning -------------------------------------------------------------

    @checked_arguments()
    def feedback(
        self,
        used: Sequence[str],
        outcome: float,
        query_concepts: Sequence[str] | None = None,
        read: str | None = None,
    ) -> FeedbackResult:
        """Rate the memories an answer used, with ``outcome`` in [-1, 1].

        ``read`` is the handle of the read that found them (its result's ``id``):
        what it asked is taught, its concepts and, where an embedder was attached,
        its meaning, so a later question in other words finds them too. Without a
        handle, ``query_concepts`` names what was asked (``[]``: rate with no
        question; the words a read showed name the same concepts); a call with
        neither is refused. Every link between a query
        concept and a concept of a rated memory moves by ``outcome`` (never below
        zero), each rated memory's valence moves toward it, and the call is
        appended to the feedback log. Rate only what the answer used. Ids not
        readable here raise `UnknownMemory`, a handle not kept here `UnknownRead`;
        nothing changes.
        """
        wanted = validate.check_ids(used, field="used")
        score = validate.check_outcome(outcome)
        if read is None and query_concepts is None:
            raise InvalidInput(
                "feedback needs read (the read's id) or query_concepts ([] to rate with"
                " no question)",
                field="read",
            )
        handle = validate.check_read_id(read) if read is not None else None
        concepts = [
            n for n, _ in validate.check_concepts(query_concepts or [], field="query_concepts")
        ]
        return hebbian.apply_feedback(self._store, self.scope, wanted, score, concepts, handle)

    @checked_arguments()
    def graph(self, concepts: Sequence[str], depth: int = 1) -> Graph:
        """The learned links around ``concepts``, ``depth`` (1–3) hops out, each concept
        shown as this scope wrote it most (a word that stems back to it)."""
        names = [n for n, _ in validate.check_concepts(concepts)]
        if not names:
            raise InvalidInput("graph needs at least one concept", field="concepts")
        request.check_int(depth, "depth", 1, hebbian.MAX_HOPS)
        return hebbian.graph(self._store, self.scope, names, depth)

    def stats(self) -> Stats:
        """Counts of memories, concepts, links and feedback in this scope's view."""
        return self._store.stats(self.scope)


def checked_scope(
    agent_id: Any, project_id: Any = "", channel: Any = "", role: Any = None
) -> Scope:
    """The scope these names give, each checked: strings of at most 256 chars, a
    non-empty agent, and a role (when given) on one line."""
    for name, value in (("agent_id", agent_id), ("project_id", project_id), ("channel", channel)):
        if not isinstance(value, str) or len(value) > 256:
            raise InvalidInput(f"{name} must be a string of at most 256 chars", field=name)
        check_clean(value, name)
    if not agent_id.strip():
        raise InvalidInput("agent_id must not be empty", field="agent_id")
    return Scope(
        agent_id, project_id, channel, request.check_role(role) if role is not None else None
    )


def _refused(exc: AssocmemError) -> WriteResult:
    return WriteResult(
        id=None,
        stored=False,
        reason=exc.message,
        error=type(exc).__name__,
        field=getattr(exc, "field", None),
    )
