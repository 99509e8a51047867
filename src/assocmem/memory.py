"""`Memory`: the public API. Validates arguments, then calls the engine modules.

Invariant: every public method either completes or raises an `AssocmemError`
having changed nothing; a batch write keeps its valid items and reports the rest.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

from assocmem.consolidate import cohorts as cohort_value
from assocmem.consolidate import dream
from assocmem.errors import AssocmemError, InvalidInput, PathRefused, UnknownMemory
from assocmem.graph import declare as declarations
from assocmem.graph import reconstruct as reconstruction
from assocmem.graph import traverse as traversal
from assocmem.lifecycle import contradictions as conflicts
from assocmem.lifecycle import retention, status
from assocmem.links import hebbian as links
from assocmem.links import reinforce as reinforcement
from assocmem.procedures import gate as procedures
from assocmem.procedures import graduation
from assocmem.recall import filters, profiles, soft
from assocmem.recall import pipeline as recall
from assocmem.recall import request as requests
from assocmem.recall.profiles import GENERAL
from assocmem.schema import NewMemory
from assocmem.store import Store, View, open_store
from assocmem.store.connection import SYNCHRONOUS
from assocmem.text import times
from assocmem.text.clean import check_clean
from assocmem.trust import attest as attestations
from assocmem.trust import attributed, convergence, stale, taint
from assocmem.trust import budget as irreversible
from assocmem.trust import credit as credits
from assocmem.trust import grades as evidence_grades
from assocmem.trust import monitor as cusum
from assocmem.trust import receipts as receipt_chain
from assocmem.trust import slash as slashing
from assocmem.trust import standing as standings
from assocmem.types import (
    KINDS,
    STATUSES,
    AppliedLinks,
    AttributionReport,
    Bridge,
    Case,
    Claim,
    ClusterConsolidation,
    CohortValue,
    Consolidation,
    Contradiction,
    ConvergenceReport,
    CoverageGap,
    Declared,
    FeedbackResult,
    Gaps,
    GateReport,
    Grade,
    GraduationReport,
    Graph,
    IdeaMethod,
    IndexReport,
    IndexStatus,
    Lifecycle,
    MaintenanceReport,
    MonitorResult,
    NoteHit,
    Procedure,
    Ratified,
    ReadResult,
    Reconstruction,
    Record,
    Scope,
    SoftRead,
    SpendResult,
    StaleDerived,
    Standing,
    Stats,
    Traversal,
    WriteResult,
)
from assocmem.vault import index as vault_indexing
from assocmem.vault import maintain as vault_upkeep
from assocmem.vault import tools as vault_tools
from assocmem.vectors.embedders import Embedder, load_embedder
from assocmem.vectors.space import VectorSpace
from assocmem.write import validate as records

MAX_BATCH = 10_000
EXPORT_PAGE = 500

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


class Memory:
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
        self._vault_roots = _resolved_roots(vault_roots)
        self._strict = _checked_strict(strict_corroboration)
        # trust: attribution (issue 19 part 2) -- receipts are off unless asked for.
        if not isinstance(receipts, bool):
            raise InvalidInput("receipts must be true or false", field="receipts")
        self._receipt_key = receipt_chain.load_key(receipt_key) if receipt_key is not None else None
        self._receipts = receipts or self._receipt_key is not None
        self._reinforce = _checked_reinforce(reinforce)  # i18
        if synchronous not in SYNCHRONOUS:
            raise InvalidInput(
                f"synchronous must be one of {', '.join(SYNCHRONOUS)}", field="synchronous"
            )
        self._profile = profiles.named(profile)
        self.scope = checked_scope(agent_id, project_id, channel, role)
        self._store: Store = open_store(str(target), synchronous=synchronous)
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
        store: Store,
        scope: Scope,
        space: VectorSpace | None = None,
        profile: str = GENERAL.name,
        vault_roots: Sequence[str] | None = None,
        strict_corroboration: bool = False,
    ) -> Memory:
        """A `Memory` seeing ``store`` as ``scope``, sharing an open store (a server
        serves many callers over one store) and, when given, a `VectorSpace` over its
        database; ``vault_roots`` as for the constructor. Closing it leaves the store open."""
        memory = cls.__new__(cls)
        memory._vault_roots = _resolved_roots(vault_roots)
        memory._profile = profiles.named(profile)
        memory.scope, memory._store = scope, store
        memory._space = space.with_profile(memory._profile) if space is not None else None
        memory._owns_store = False
        memory._strict = _checked_strict(strict_corroboration)
        memory._receipts, memory._receipt_key = False, None
        memory._reinforce = False  # i18: a shared store's reads never drift
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
    @checked_arguments(*records.WRITE_FIELDS)
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
        by entity name or ``mem:<id>``) it evidences. A malformed or clashing
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
        memory = records.new_memory({k: v for k, v in fields.items() if v is not None})
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
        valid: list[tuple[int, NewMemory]] = []
        declared: dict[int, Any] = {}
        signed: dict[int, tuple[str, str] | None] = {}
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
                memory = records.new_memory(fields)
                self._check_parents([memory])
                if attested is not None:
                    signed[position] = self._attested([memory], [attested])[0]
            except AssocmemError as exc:
                results.append(_refused(exc))
                continue
            results.append(None)
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
        with self._store.transaction():
            results = self._store.write(self.scope, memories, vectors)
            self._standing_on_write(memories, results, signed)  # i19: taint, attestations
            if self._receipts:  # trust: attribution (issue 19 part 2)
                receipt_chain.append(self._store, self.scope, memories, results, self._receipt_key)
            return [
                self._with_associations(result, declared)
                for result, declared in zip(results, associations, strict=True)
            ]

    def _with_associations(self, result: WriteResult, associations: Any) -> WriteResult:
        """Declare a stored memory's associations (it is their anchor); report them.
        Each declaration is a savepoint of the write: one dropped takes back only itself."""
        if associations is None or not result.stored or result.id is None:
            return result
        anchor = self._store.visible_seqs(self.scope, [result.id])[result.id]
        declared = declarations.declare(
            self._store, View(self.scope), associations, anchor=anchor, declared_by="agent"
        )
        return replace(result, associations=declared)

    def _check_parents(self, memories: Sequence[NewMemory]) -> None:
        parents = sorted({p for m in memories for p in m.derived_from})
        if parents:
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
        threshold: float = links.DEFAULT_THRESHOLD,
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

        ``mode="evidence"`` returns only semantic memories from a named source whose
        verification is still valid at ``as_of`` (confidence never counts); it may
        return nothing, and ``gates`` says which gate dropped what. ``role`` reads in
        another role than the memory's. Superseded values are left out unless
        ``include_superseded``. ``profile`` ranks by another recall profile than the
        memory's (``"general"`` or ``"conversation"``). ``influence_only`` returns only
        memories that earned standing (`standing`): gate what drives an action.
        ``with_status`` attaches each item's `convergence_report` as its ``status``
        (convergence-backed means independent origins agree, not that the claim is true).
        """
        if not isinstance(influence_only, bool):
            raise InvalidInput("influence_only must be true or false", field="influence_only")
        if not isinstance(with_status, bool):
            raise InvalidInput("with_status must be true or false", field="with_status")
        request = requests.read_request(
            self.scope, query, concepts=concepts, k=k, hops=hops, threshold=threshold,
            where=where, prefer=prefer, prefer_trust=prefer_trust,
            prefer_max_boost=prefer_max_boost, kinds=kinds, explain=explain, as_of=as_of,
            mode=mode, role=role, task=task, include_superseded=include_superseded,
            profile=self._profile.name if profile is None else profile,
        )  # fmt: skip
        if influence_only:
            request = replace(request, influence_only=True, strict=self._strict)
        result = recall.read(self._store, request, self._space)
        if self._reinforce:  # i18: earned reinforcement, off by default
            ids = [item.id for item in result.items]
            reinforcement.reinforce(
                self._store, self._store.visible_seqs(self.scope, ids, statuses=STATUSES), result
            )
        if with_status:  # trust: attribution (issue 19 part 2)
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
        wanted = records.check_ids(ids)
        found = self._store.records(self.scope, wanted)
        missing = [i for i in wanted if i not in {r.id for r in found}]
        if missing:
            raise UnknownMemory(f"no memory {missing[0]!r} is readable here", record_id=missing[0])
        seqs = self._store.visible_seqs(self.scope, [r.id for r in found], statuses=STATUSES)
        marked = standings.marked(self._store, {seqs[r.id]: r for r in found})  # i19
        return [marked[seqs[r.id]] for r in found]

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

        ``anchor_ref`` (``mem:<id>``) names the memory that mentions the entities and
        evidences the relations. ``declared_by`` is ``"agent"`` or ``"operator"``.
        Malformed or clashing declarations are dropped and reported.
        """
        if not isinstance(associations, Mapping):
            raise InvalidInput("associations must be a dict", field="associations")
        if anchor_ref is not None and not isinstance(anchor_ref, str):
            raise InvalidInput("anchor_ref must be a mem:<id> string", field="anchor_ref")
        view = View(self.scope)
        anchor = declarations.memory_seq(self._store, view, anchor_ref) if anchor_ref else None
        return declarations.declare(
            self._store, view, associations, anchor=anchor,
            declared_by=declarations.check_declarer(declared_by),
        )  # fmt: skip

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
            seq = declarations.memory_seq(self._store, view, pair[1])
            pairs += [(e.id, seq) for e in traversal.entities_named(self._store, view, pair[0])]
        removed, unmentioned = self._store.retract(self.scope, list(relation_ids), pairs)
        return {"relations": removed, "mentions": unmentioned}

    @checked_arguments()
    def delete_entity(self, entity: str) -> int:
        """Delete every readable entity answering to ``entity`` with its aliases,
        mentions and relations; returns how many entities went."""
        found = traversal.entities_named(self._store, View(self.scope), entity)
        return self._store.delete_entities(self.scope, [e.id for e in found])

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
        return status.archive(self._store, self._select(ids, where))

    @checked_arguments()
    def restore(self, ids: Sequence[str], scope: str | None = None) -> Lifecycle:
        """Bring archived memories back into reads, unchanged.

        With ``scope`` (``"memory"`` or ``"source"``) it lifts a `slash` instead, of
        these memories or of everything sharing their source, bringing back the exact
        standing each had before it was first slashed."""
        if scope is not None:
            chosen = slashing.check_scope(scope)
            seqs = self._select(ids, None, statuses=STATUSES)
            return slashing.lift(self._store, self._standing_view(), seqs, chosen)
        return status.restore(self._store, self._select(ids, None, statuses=("archived",)))

    @checked_arguments()
    def protect(self, ids: Sequence[str], protected: bool = True) -> Lifecycle:
        """Shield memories from archiving (or lift the shield). It does not renew validity."""
        if not isinstance(protected, bool):
            raise InvalidInput("protected must be true or false", field="protected")
        return status.protect(self._store, self._select(ids, None, statuses=STATUSES), protected)

    @checked_arguments()
    def history(self, key: Sequence[str]) -> list[Record]:
        """Every value a ``(subject, relation)`` key held, oldest observation first."""
        return status.history(self._store, View(self.scope), records.check_key(key))

    def contradictions(self) -> list[Contradiction]:
        """Pairs flagged for review (one key, different values; near-identical claims of
        opposite polarity; one claim with a different value in one slot, "Paris is the
        capital of France" / "Lyon is the capital of France"). Nothing is edited or
        deleted."""
        return conflicts.contradictions(self._store, View(self.scope))

    @checked_arguments()
    def retain(self, policy: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Apply a retention policy given as data: rules of ``match`` filters and actions
        (``require`` fields, ``recheck_after_days``, ``protect``, ``archive_expired``,
        ``propose_procedure``). None (default): seed 001's example policy. Returns a report
        per rule."""
        chosen = retention.EXAMPLE_POLICY if policy is None else policy
        return retention.retain(self._store, View(self.scope), chosen)

    @checked_arguments()
    def resolve(self, entity: str, *predicates: str) -> list[str]:
        """Follow declared relations from ``entity`` through ``predicates`` in order
        (subject to object), exactly: ``resolve("demo-project", "uses", "major version")``."""
        return traversal.resolve(self._store, View(self.scope), entity, predicates)

    # -- consolidation (issue 18: the dream pass, clusters, value by cohort) --------

    @checked_arguments()
    def consolidate(self, keep: int | None = None) -> Consolidation:
        """The dream pass: flag hubs, link near-duplicates, supersede toggled states, keep a budget.

        It only adds a derived layer and never rewrites raw text: memories matching
        nearly every query are flagged as hubs; near-duplicates are linked, never
        merged; of two opposite statements of one subject's state ("the flag is on" /
        "the flag is off") the newer supersedes the older. With ``keep``, at most that
        many memories stay active: the unprotected surplus with the lowest value ×
        per-kind half-life decay is archived (reversibly: `restore`). A second pass
        over an unchanged store adds nothing.
        """
        if keep is not None:
            requests.check_int(keep, "keep", 0, 2**62)
        return dream.consolidate(self._store, View(self.scope), keep)

    @checked_arguments()
    def consolidate_clusters(self, threshold: int = 15) -> ClusterConsolidation:
        """Consolidate each topic of episodic memories only once it has grown dense.

        Active episodic memories are grouped into topics by shared concepts; a topic
        of at least ``threshold`` memories gets the dream pass's duplicate, toggle and
        budget steps (its ``threshold`` most valuable stay active, the rest are
        archived, reversibly); sparser topics keep their raw episodes.
        """
        requests.check_int(threshold, "threshold", 2, 1_000_000)
        return dream.consolidate_clusters(self._store, View(self.scope), threshold)

    @checked_arguments()
    def value_by_cohort(self, by: str = "tag") -> CohortValue:
        """Value reported per tag or per time block, never per memory.

        ``by`` is ``"tag"`` (default), ``"month"`` or ``"week"``; each cohort has its
        count of active memories, their mean value and the feedback outcomes they got.
        """
        return cohort_value.value_by_cohort(
            self._store, View(self.scope), cohort_value.check_by(by)
        )

    # -- end consolidation ------------------------------------------------------------

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
            wanted = records.check_ids(ids)
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
        traversal.check_bounds(max_hops, limit)
        return traversal.traverse(self._store, View(self.scope), entity, max_hops, limit)

    @checked_arguments()
    def reconstruct(
        self,
        query: str,
        *,
        count: int = 10,
        max_hops: int = 1,
        max_evidence: int = reconstruction.DEFAULT_MAX_EVIDENCE,
    ) -> Reconstruction:
        """Reconstructive recall: the items of a read, each with evidence reached through
        declared relations (``why="relation:<predicate>"``, ``hops``), bundles of records
        a declared record relation joins, and role-vocabulary relations as roles. With
        nothing declared it returns exactly the read's items."""
        traversal.check_bounds(max_hops, max_evidence, "max_evidence", reconstruction.MAX_EVIDENCE)
        request = requests.read_request(self.scope, query, k=count, profile=self._profile.name)
        return reconstruction.reconstruct(
            self._store, self._space, request, max_hops=max_hops, max_evidence=max_evidence
        )

    # -- the vault: a folder of Markdown notes (vault/ room) ----------------------

    @checked_arguments()
    def vault_index(self, path: str | None = None) -> IndexReport:
        """Index a folder of Markdown notes (or re-index the one indexed before).

        Only notes whose content changed are re-read; deleted notes leave with their
        memories and links. Symlinks are never followed and notes over 2 MiB are
        skipped (reported in ``skipped``). The chunks are memories of the vault's own
        scope (channel ``vault``), so ordinary reads never see them.
        """
        root = self._vault_root(path)
        return vault_indexing.index(self._store, self._vault, root, self._space)

    def index_status(self) -> IndexStatus:
        """The indexed vault: its folder, notes, chunks, links, dead links and folder spread."""
        return vault_tools.index_status(self._store, self._vault)

    @checked_arguments()
    def relevant_notes(self, query: str, k: int = 5) -> list[NoteHit]:
        """The notes most relevant to a question (relevance × accrued value), with excerpts."""
        return vault_tools.relevant_notes(self._store, self._vault, self._space, query, k)

    @checked_arguments()
    def coverage_gap(self, query: str, k: int = 5) -> CoverageGap:
        """What the vault covers of a question: top notes, a completeness score and the
        question's terms no note supports."""
        return vault_tools.coverage_gap(self._store, self._vault, self._space, query, k)

    def find_gaps(self) -> Gaps:
        """Where the note network is blind: isolated and under-linked notes, thin folders."""
        return vault_tools.find_gaps(self._store, self._vault)

    @checked_arguments()
    def bridge_candidates(self, note: str, k: int = 5) -> list[Bridge]:
        """Notes in other folders, not linked to ``note``, close in meaning, with the reason."""
        return vault_tools.bridge_candidates(self._store, self._vault, self._space, note, k)

    @checked_arguments()
    def extract_claims(self, note: str) -> list[Claim]:
        """Claim-like sentences of a note, with line numbers, to ground or challenge."""
        return vault_tools.extract_claims(self._store, self._vault, note)

    def idea_methods(self) -> list[IdeaMethod]:
        """A small toolkit of named idea-generation recipes, as data."""
        return vault_tools.idea_methods()

    @checked_arguments()
    def maintenance_report(self, stale_days: int = 365) -> MaintenanceReport:
        """The vault's chores: dead links, orphans with a note to link each to, stale
        notes (by frontmatter date), near-duplicates, a health score and archive candidates."""
        return vault_upkeep.report(
            self._store, self._vault, self._space, stale_days, vault_upkeep.today()
        )

    @checked_arguments()
    def apply_links(self, notes: Sequence[str] | None = None, dry_run: bool = True) -> AppliedLinks:
        """Append a marked ``## Related (suggested)`` block of links to the orphans (or
        the named notes). A dry run (the default) returns the plan and writes nothing;
        a re-run replaces its own block, and nothing else in a note ever changes."""
        remembered = self._store.vault_root(self._vault)
        if remembered is None:
            raise InvalidInput("no vault is indexed here: call vault_index first", field="notes")
        root = self._vault_root(remembered)
        return vault_upkeep.apply_links(self._store, self._vault, self._space, root, notes, dry_run)

    @property
    def _vault(self) -> Scope:
        return vault_indexing.vault_scope(self.scope)

    def _vault_root(self, path: str | None) -> Path:
        """The folder to index: ``path`` or the remembered one, resolved, allowed here."""
        if path is None:
            path = self._store.vault_root(self._vault)
            if path is None:
                raise InvalidInput("no vault is indexed here yet: give its path", field="path")
        if not isinstance(path, str) or not path.strip():
            raise InvalidInput("path must name a folder", field="path")
        try:
            root = Path(path).expanduser().resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            raise InvalidInput(f"path {path!r} cannot be resolved", field="path") from exc
        allowed = self._vault_roots
        if allowed is not None and not any(root.is_relative_to(a) for a in allowed):
            raise PathRefused(
                "this memory may index only folders under its vault roots"
                + ("" if allowed else " (none are configured: pass --vault-root)")
            )
        try:
            is_folder = root.is_dir()
        except OSError:
            is_folder = False
        if not is_folder:
            raise InvalidInput(f"path {path!r} is not a folder", field="path")
        return root

    # -- learning -------------------------------------------------------------

    @checked_arguments()
    def feedback(
        self,
        ids: Sequence[str],
        outcome: float,
        query_concepts: Sequence[str] | None = None,
    ) -> FeedbackResult:
        """Rate the memories an answer relied on, with ``outcome`` in [-1, 1].

        Every link between a query concept and a concept of a rated memory moves
        by ``outcome`` (never below zero), each rated memory's valence moves toward
        it, and the call is appended to the feedback log. Rate only what the
        answer used. Ids not readable here raise `UnknownMemory`; nothing changes.
        """
        wanted = records.check_ids(ids)
        score = records.check_outcome(outcome)
        concepts = [
            n for n, _ in records.check_concepts(query_concepts or [], field="query_concepts")
        ]
        return links.apply_feedback(self._store, self.scope, wanted, score, concepts)

    @checked_arguments()
    def graph(self, concepts: Sequence[str], depth: int = 1) -> Graph:
        """The learned links around ``concepts``, ``depth`` (1–3) hops out."""
        names = [n for n, _ in records.check_concepts(concepts)]
        if not names:
            raise InvalidInput("graph needs at least one concept", field="concepts")
        requests.check_int(depth, "depth", 1, links.MAX_HOPS)
        return links.graph(self._store, self.scope, names, depth)

    # -- standing (i19: the trust room) -----------------------------------------

    @checked_arguments()
    def credit(self, ids: Sequence[str], outcome: str | int) -> int:
        """Log the outcome these memories drove, ``"good"`` or ``"bad"`` (or +1 / -1).

        The log is append-only and is what standing is earned from: give outcomes from
        the application, on real resolved work, never from recalled content grading
        itself. An outcome given while a memory is slashed is logged, not banked.
        Returns how many outcomes were logged.
        """
        good = credits.check_outcome(outcome)
        seqs = self._select(ids, None, statuses=STATUSES)
        return credits.record(self._store, self.scope, seqs, good)

    @checked_arguments()
    def standing(self, ids: Sequence[str]) -> list[Standing]:
        """The standing of these memories: outcomes, sources, taint, slash and whether
        each passes the influence gate (``earned``), in order."""
        seqs = self._select(ids, None, statuses=STATUSES)
        found = standings.standing_by_seq(self._store, self._standing_view(), seqs, self._strict)
        return [found[seq] for seq in seqs]

    def influence_gate_report(self) -> GateReport:
        """What ``read(..., influence_only=True)`` would cost here: the fraction of
        active memories it would block, the breakdown of why, and advice."""
        return standings.gate_report(self._store, View(self.scope), self._strict)

    @checked_arguments()
    def slash(self, ids: Sequence[str], scope: str = "source") -> Lifecycle:
        """Forfeit standing: of these memories (``scope="memory"``) or of every memory
        sharing their canonical source or carrying it as taint (``"source"``). They
        fail the influence gate and are marked ``slashed``, stay readable, and
        ``restore(ids, scope=...)`` brings back their exact pre-slash standing."""
        chosen = slashing.check_scope(scope)
        seqs = self._select(ids, None, statuses=STATUSES)
        return slashing.slash(self._store, self._standing_view(), seqs, chosen)

    def stale_derived(self) -> list[StaleDerived]:
        """Memories whose derived_from ancestry holds one since contradicted,
        superseded or slashed. Flagged only; nothing is changed."""
        return stale.stale_derived(self._store, View(self.scope))

    def _standing_view(self) -> View:
        return View(self.scope, statuses=STATUSES, kinds=KINDS)

    def _attested(
        self, memories: Sequence[NewMemory], attestations_: Sequence[Any]
    ) -> list[tuple[str, str] | None]:
        return [
            None if a is None else attestations.verify(m.text, m.source, a)
            for m, a in zip(memories, attestations_, strict=True)
        ]

    def _standing_on_write(
        self,
        memories: Sequence[NewMemory],
        results: Sequence[WriteResult],
        signed: Sequence[tuple[str, str] | None],
    ) -> None:
        """Inside the write: record derived memories' taint and verified attestations."""
        wanted = [
            (m, r, signed[i] if i < len(signed) else None)
            for i, (m, r) in enumerate(zip(memories, results, strict=True))
            if r.stored and r.id is not None
        ]
        wanted = [(m, r, a) for m, r, a in wanted if m.derived_from or a is not None]
        if not wanted:
            return
        names = [r.id for _, r, _ in wanted if r.id] + [
            p for m, _, _ in wanted for p in m.derived_from
        ]
        seqs = self._store.visible_seqs(self.scope, names, statuses=STATUSES)
        taint.inherit(
            self._store,
            [(seqs[r.id], [seqs[p] for p in m.derived_from if p in seqs])
             for m, r, _ in wanted if m.derived_from and r.id],
        )  # fmt: skip
        for _, r, a in wanted:
            if a is not None and r.id:
                self._store.add_attestation(seqs[r.id], *a)

    # -- procedures and graduation (i18: the procedures room) --------------------

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
        return procedures.propose(
            self._store, View(self.scope), episodes, steps, preconditions, checks, name
        )

    @checked_arguments()
    def promote_procedure(self, id: str) -> Procedure:
        """Run the promotion gate: ≥ 2 covered successful episodes, no covered failed
        one (a counterexample), every check case answered as expected. A pass writes a
        ``procedural`` record referencing its episodes, preconditions and checks; a
        failure leaves it ``rejected`` with the reason."""
        view = View(self.scope)
        return procedures.promote(
            self._store, view, procedures.row(self._store, view, id), self._write_one
        )

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
        old = procedures.row(self._store, view, id)
        new = procedures.propose(
            self._store, view, [*old.episodes, *(episodes or [])],
            old.steps if steps is None else steps,
            old.preconditions if preconditions is None else preconditions,
            old.checks if checks is None else checks, old.name, supersedes=old,
        )  # fmt: skip
        return procedures.promote(
            self._store, view, procedures.row(self._store, view, new.id), self._write_one
        )

    @checked_arguments()
    def retire_procedure(self, id: str, retired: bool = True) -> Procedure:
        """Retire a promoted procedure (its record is archived), or bring it back."""
        if not isinstance(retired, bool):
            raise InvalidInput("retired must be true or false", field="retired")
        view = View(self.scope)
        return procedures.retire(self._store, view, procedures.row(self._store, view, id), retired)

    def graduate(self) -> GraduationReport:
        """Graduate corroborated episodic memories to semantic: a helpful outcome
        (feedback summing above zero, or a good credit) or ≥ 2 distinct canonical
        sources. Its own kind or confidence never counts; each move is recorded with
        its evidence (`ungraduate` takes it back)."""
        return graduation.graduate(self._store, View(self.scope), self._strict)

    @checked_arguments()
    def ungraduate(self, ids: Sequence[str]) -> Lifecycle:
        """Take back the graduation of these memories (semantic back to episodic)."""
        seqs = self._select(ids, None, statuses=STATUSES)
        return graduation.revert(self._store, dict(zip(records.check_ids(ids), seqs, strict=True)))

    def _write_one(self, memory: NewMemory) -> WriteResult:
        (result,) = self._store_memories([memory], [None])
        return result

    # -- end i18 ----------------------------------------------------------------

    def stats(self) -> Stats:
        """Counts of memories, concepts, links and feedback in this scope's view."""
        return self._store.stats(self.scope)

    # -- trust: attribution (issue 19 part 2) ----------------------------------

    @checked_arguments()
    def verify_attribution(self, public_key: str | None = None) -> AttributionReport:
        """Check the write-receipt chain and every active memory's sources against it.

        The chain is intact unless a receipt was edited, dropped or re-linked
        (``broken_at`` names the first). A mismatch is an active memory whose current
        canonical sources (own source and inherited taint) differ from what its
        receipt committed: a relabel or a stripped taint. ``public_key`` (hex; default:
        this memory's ``receipt_key``'s) makes every receipt need a valid signature by
        it. Unsigned, the chain proves nothing against whoever can rewrite the store
        (they can recompute it); signed or not, it never proves a source was right.
        """
        expected = public_key
        if expected is None and self._receipt_key is not None:
            expected = receipt_chain.public_hex(self._receipt_key)
        if expected is not None and not isinstance(expected, str):
            raise InvalidInput("public_key must be a hex string", field="public_key")
        return receipt_chain.verify(self._store, self.scope, expected)

    @checked_arguments()
    def ratify(self, id: str, kind: str, by_key: str, lens: str | None = None) -> Ratified:
        """Record an external event on a claim: independent_witness, reproduction,
        prior_art_empty or audit, by the identity ``by_key`` through ``lens``.

        The claim's author cannot ratify it (`SelfRatification`); a repeated
        (by_key, kind, lens) is not stored again (``stored`` False) and adds nothing.
        """
        kind, by_key, lens_name = evidence_grades.check_ratification(kind, by_key, lens)
        (record,) = self.get([id])
        view = View(self.scope, statuses=STATUSES)
        evidence_grades.refuse_author(by_key, convergence.claim_authors(self._store, view, record))
        stored = self._store.add_ratification(record.id, kind, by_key, lens_name, times.now())
        return Ratified(id=record.id, kind=kind, by_key=by_key, lens=lens, stored=stored)

    @checked_arguments()
    def grade(self, id: str) -> Grade:
        """A claim's evidence grade (claimed, corroborated, verified, settled) and novelty.

        A pure function of its ratifications and corroboration: it moves only on
        events from parties other than the author, never on anything written.
        """
        (record,) = self.get([id])
        return convergence.grade(self._store, View(self.scope, statuses=STATUSES), record)

    @checked_arguments()
    def spend_irreversible(self, ids: Sequence[str], amount: float, budget: float) -> SpendResult:
        """Charge an irreversible action that used these memories to the lifetime
        budget of every source they carry (own and inherited); denied, charging
        nothing, if any source would pass ``budget``. Never refunded by `restore`."""
        wanted = records.check_ids(ids)
        cost = irreversible.check_amount(amount, "amount", positive=True)
        cap = irreversible.check_amount(budget, "budget", positive=False)
        seqs = self._select(wanted, None, statuses=STATUSES)
        sources = [s for found in attributed.charged(self._store, seqs).values() for s in found]
        return irreversible.spend(self._store, self.scope, sources, cost, cap)

    @checked_arguments()
    def monitor(
        self,
        ids: Sequence[str],
        outcome: str | int,
        k: float = 0.1,
        h: float = 4.0,
        auto_slash: bool = False,
    ) -> MonitorResult:
        """Credit an outcome (as `credit` does) and run a one-sided CUSUM per source.

        Every source the memories are attributed to (own and inherited) moves
        ``S = max(0, S + x - k)``, x = 1 for bad and 0 for good; at ``S >= h`` a case
        is raised for it (see `cases`). The statistic is kept in the store, so no
        session resets it. A source holding its bad rate at or below ``k`` is never
        caught (bound it with `spend_irreversible`). ``auto_slash`` (off by default)
        slashes a source on its case; keep it for an oracle nobody can feed.
        """
        wanted = records.check_ids(ids)
        good = cusum.check_outcome(outcome)
        reference = cusum.check_parameter(k, "k", positive=False)
        threshold = cusum.check_parameter(h, "h", positive=True)
        if not isinstance(auto_slash, bool):
            raise InvalidInput("auto_slash must be true or false", field="auto_slash")
        seqs = dict(zip(wanted, self._select(wanted, None, statuses=STATUSES), strict=True))
        view = View(self.scope, statuses=STATUSES)
        return cusum.monitor(self._store, view, seqs, good, reference, threshold, auto_slash)

    def cases(self) -> list[Case]:
        """The open cases `monitor` raised against sources, oldest first."""
        return cusum.cases(self._store, View(self.scope))

    @checked_arguments()
    def convergence_report(self, id: str) -> ConvergenceReport:
        """Whether a claim is convergence-backed (independent origins agree, which is
        not truth) or adjudicated (a reproduction or audit by another identity), with
        ``low_source_diversity`` and a lineage grade capped at its weakest ancestor."""
        (record,) = self.get([id])
        return convergence.report(self._store, View(self.scope, statuses=STATUSES), record)

    # -- end trust: attribution --------------------------------------------------


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
        agent_id, project_id, channel, requests.check_role(role) if role is not None else None
    )


def _resolved_roots(roots: Sequence[str] | None) -> tuple[Path, ...] | None:
    if roots is None:
        return None
    if isinstance(roots, str):
        raise InvalidInput("vault_roots must be a list of folders", field="vault_roots")
    return tuple(Path(r).expanduser().resolve() for r in roots)


def _checked_strict(strict: Any) -> bool:
    if not isinstance(strict, bool):
        raise InvalidInput(
            "strict_corroboration must be true or false", field="strict_corroboration"
        )
    return strict


def _checked_reinforce(reinforce: Any) -> bool:
    if not isinstance(reinforce, bool):
        raise InvalidInput("reinforce must be true or false", field="reinforce")
    return reinforce


def _refused(exc: AssocmemError) -> WriteResult:
    return WriteResult(
        id=None,
        stored=False,
        reason=exc.message,
        error=type(exc).__name__,
        field=getattr(exc, "field", None),
    )
