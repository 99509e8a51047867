"""`AsyncClient`: the `Memory` API over HTTP for asyncio, each method a coroutine.

Invariants: every operation of `surface.operations()` is a coroutine method here with
exactly `Memory`'s signature, return type and docstring (the block between the markers is
generated from the registry by `generate.regenerate()`; a test compares them); each
sends only the arguments the caller gave (the server applies the same defaults) and
returns the same frozen types `Memory` returns; a server error is raised as the same
`AssocmemError` class, and a body over the server's limit is `InvalidInput` before it
is sent. One pool of kept-alive connections per client, shared by the tasks of one event loop;
retried as `wire.Retries` allows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from assocmem.adapters.client import wire
from assocmem.consolidate.types import ClusterConsolidation, CohortValue, Consolidation
from assocmem.graph.types import Reconstruction, Traversal
from assocmem.inspect.types import Health, Inspection, MemoryPage
from assocmem.lifecycle.types import Contradiction, Lifecycle
from assocmem.links.types import FeedbackLog, FeedbackResult, Graph
from assocmem.portable.types import ImportReport
from assocmem.procedures.types import GraduationReport, Procedure
from assocmem.trust.types import (
    AttributionReport,
    Case,
    GateReport,
    Grade,
    MonitorResult,
    Ratified,
    SpendResult,
    StaleDerived,
    Standing,
)
from assocmem.types import (
    ConvergenceReport,
    Declared,
    ReadResult,
    Record,
    SoftRead,
    Stats,
    WriteResult,
)
from assocmem.vault.types import (
    AppliedLinks,
    Bridge,
    Claim,
    CoverageGap,
    Gaps,
    IdeaMethod,
    IndexReport,
    IndexStatus,
    MaintenanceReport,
    NoteHit,
)

if TYPE_CHECKING:
    import httpx


class AsyncClient(wire.Remote):
    """A remote memory served by ``assocmem serve``, for asyncio: ``await`` each method.
    Use it as ``async with AsyncClient(url) as mem:``, or ``await mem.aclose()``.

    Parameters: ``url``, ``api_key``, and the keywords ``project_id``, ``channel``,
    ``role``, ``agent_id``, ``timeout`` and ``retries``, as for `wire.Remote`.
    """

    HTTP = "AsyncClient"
    _http: httpx.AsyncClient

    async def aclose(self) -> None:
        """Close the kept-alive connections."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """POST one method call; the decoded JSON result, or the server's error raised."""
        body = wire.request_body(name, self._scope, arguments)
        retries = wire.Retries(name, self._retries)
        while True:
            try:
                response = await self._http.post(f"/v1/{name}", content=body)
            except self._httpx.TransportError as exc:
                await asyncio.sleep(wire.wait_after_failure(retries, exc, self.url, name))
                continue
            wait = wire.wait_after_answer(retries, response)
            if wait is None:
                return wire.decoded(response)
            await asyncio.sleep(wait)

    async def _send(self, name: str, given: dict[str, Any]) -> Any:
        """Call operation ``name`` with a method's ``locals()``, its answer rebuilt as
        the method's return type."""
        method = getattr(AsyncClient, name)
        return wire.result(method, await self.call(name, wire.given_arguments(method, given)))

    # -- operations: generated from `surface.operations()`; do not edit by hand --

    async def write(
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
        return cast("WriteResult", await self._send("write", locals()))

    async def write_many(self, items: Sequence[Mapping[str, Any]]) -> list[WriteResult]:
        """Store many memories in one transaction, one `WriteResult` per item, in order.

        Each item holds the keyword arguments of `write`. Invalid items are not
        stored: their result has ``stored=False``, the ``error`` type, the ``field``
        and the message as ``reason``. Valid items are stored all together or,
        if the store fails, not at all (the error is raised).
        """
        return cast("list[WriteResult]", await self._send("write_many", locals()))

    async def read(
        self,
        query: str | None = None,
        *,
        concepts: Sequence[str] | None = None,
        k: int = 10,
        hops: int = 1,
        threshold: float = 2.0,
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
        return cast("ReadResult", await self._send("read", locals()))

    async def get(self, ids: Sequence[str]) -> list[Record]:
        """The records with these ids, in order. Ids not readable here raise `UnknownMemory`."""
        return cast("list[Record]", await self._send("get", locals()))

    async def export(self) -> Iterator[Record]:
        """Every readable record in this scope, oldest first (read page by page)."""
        return cast("Iterator[Record]", await self._send("export", locals()))

    async def feedback(
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
        return cast("FeedbackResult", await self._send("feedback", locals()))

    async def graph(self, concepts: Sequence[str], depth: int = 1) -> Graph:
        """The learned links around ``concepts``, ``depth`` (1–3) hops out, each concept
        shown as this scope wrote it most (a word that stems back to it).
        """
        return cast("Graph", await self._send("graph", locals()))

    async def stats(self) -> Stats:
        """Counts of memories, concepts, links and feedback in this scope's view."""
        return cast("Stats", await self._send("stats", locals()))

    async def soft_read(
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
        return cast("SoftRead", await self._send("soft_read", locals()))

    async def declare(
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
        return cast("Declared", await self._send("declare", locals()))

    async def retract(
        self, relation_ids: Sequence[int] = (), mentions: Sequence[tuple[str, str]] = ()
    ) -> dict[str, int]:
        """Remove declared relations (by id) and mentions (``(entity, "mem:<id>")``).

        Retraction is the only way a declaration leaves; returns how many went.
        """
        return cast("dict[str, int]", await self._send("retract", locals()))

    async def delete_entity(self, entity: str) -> int:
        """Delete every readable entity answering to ``entity`` with its aliases,
        mentions and relations; returns how many entities went.
        """
        return cast("int", await self._send("delete_entity", locals()))

    async def traverse(self, entity: str, max_hops: int = 1, limit: int = 20) -> Traversal:
        """An entity's neighbourhood: the entities related to it (either direction) out to
        ``max_hops`` (≤ 5), the relations between them and the readable records mentioning
        each, bounded by ``limit`` (≤ 100); what the bounds cut is counted.
        """
        return cast("Traversal", await self._send("traverse", locals()))

    async def reconstruct(
        self,
        query: str,
        *,
        count: int = 10,
        max_hops: int = 1,
        max_evidence: int = 5,
        as_of: str | datetime | None = None,
    ) -> Reconstruction:
        """Reconstructive recall: the items of a read, each with evidence reached through
        declared relations (``why="relation:<predicate>"``, ``hops``), bundles of records
        a declared record relation joins, and role-vocabulary relations as roles. With
        nothing declared it returns exactly the read's items. ``as_of`` is the moment the
        read measures decay at (default now): with it fixed, the same store answers the
        same call byte for byte.
        """
        return cast("Reconstruction", await self._send("reconstruct", locals()))

    async def resolve(self, entity: str, *predicates: str) -> list[str]:
        """Follow declared relations from ``entity`` through ``predicates`` in order
        (subject to object), exactly: ``resolve("demo-project", "uses", "major version")``.
        """
        return cast("list[str]", await self._send("resolve", locals()))

    async def forget(
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
        otherwise match, and delete, every memory lacking it.
        """
        return cast("int", await self._send("forget", locals()))

    async def archive(
        self, ids: Sequence[str] | None = None, where: Mapping[str, Any] | None = None
    ) -> Lifecycle:
        """Move memories out of default reads, reversibly; protected ones are skipped.
        A ``where`` spells meta keys ``meta.<key>``, as for `forget`.
        """
        return cast("Lifecycle", await self._send("archive", locals()))

    async def restore(self, ids: Sequence[str], scope: str | None = None) -> Lifecycle:
        """Bring archived memories back into reads, unchanged (and statements the dream
        pass's toggle guard superseded; a later pass leaves them).

        With ``scope`` (``"memory"`` or ``"source"``) it lifts a `slash` instead, of
        these memories or of everything sharing their source, bringing back the exact
        standing each had before it was first slashed. Lifting a slash is the
        operator's: a served key without that role may not undo the penalty on what its
        own agent wrote (`OperatorRequired`).
        """
        return cast("Lifecycle", await self._send("restore", locals()))

    async def protect(self, ids: Sequence[str], protected: bool = True) -> Lifecycle:
        """Shield memories from archiving (or lift the shield). It does not renew validity."""
        return cast("Lifecycle", await self._send("protect", locals()))

    async def history(self, key: Sequence[str]) -> list[Record]:
        """Every value a ``(subject, relation)`` key held, oldest observation first."""
        return cast("list[Record]", await self._send("history", locals()))

    async def contradictions(self) -> list[Contradiction]:
        """Pairs flagged for review (one key, different values; near-identical claims of
        opposite polarity; one claim with a different value in one slot, "Paris is the
        capital of France" / "Lyon is the capital of France"). Nothing is edited or
        deleted.
        """
        return cast("list[Contradiction]", await self._send("contradictions", locals()))

    async def end_task(self, task: str) -> int:
        """Clear the working memory of a task (deleted as by `forget`); returns how many."""
        return cast("int", await self._send("end_task", locals()))

    async def retain(self, policy: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Apply a retention policy given as data, ``{"rules": [...]}``: each rule a
        ``match`` filter (as ``where`` takes) and its actions, ``require`` (fields a match
        must carry), ``recheck_after_days``, ``protect``, ``archive_expired`` and
        ``propose_procedure``. There is no default policy: rules protect and archive, so
        only the caller's own apply. Returns a report per rule.
        """
        return cast("list[dict[str, Any]]", await self._send("retain", locals()))

    async def vault_index(self, path: str | None = None) -> IndexReport:
        """Index a folder of Markdown notes (or re-index the one indexed before).

        Only notes whose content changed are re-read; deleted notes leave with their
        memories and links. Symlinks are never followed and notes over 2 MiB are
        skipped (reported in ``skipped``). The chunks are memories of the vault's own
        scope (channel ``vault``), so ordinary reads never see them.
        """
        return cast("IndexReport", await self._send("vault_index", locals()))

    async def index_status(self) -> IndexStatus:
        """The indexed vault: its folder, notes, chunks, links, dead links and folder spread."""
        return cast("IndexStatus", await self._send("index_status", locals()))

    async def relevant_notes(self, query: str, k: int = 5) -> list[NoteHit]:
        """The notes most relevant to a question (relevance × accrued value), with excerpts."""
        return cast("list[NoteHit]", await self._send("relevant_notes", locals()))

    async def coverage_gap(self, query: str, k: int = 5) -> CoverageGap:
        """What the vault covers of a question: top notes, a completeness score and the
        question's terms no note supports.
        """
        return cast("CoverageGap", await self._send("coverage_gap", locals()))

    async def find_gaps(self) -> Gaps:
        """Where the note network is blind: isolated and under-linked notes, thin folders."""
        return cast("Gaps", await self._send("find_gaps", locals()))

    async def bridge_candidates(self, note: str, k: int = 5) -> list[Bridge]:
        """Notes in other folders, not linked to ``note``, close in meaning, with the reason."""
        return cast("list[Bridge]", await self._send("bridge_candidates", locals()))

    async def extract_claims(self, note: str) -> list[Claim]:
        """Claim-like sentences of a note, with line numbers, to ground or challenge."""
        return cast("list[Claim]", await self._send("extract_claims", locals()))

    async def idea_methods(self) -> list[IdeaMethod]:
        """A small toolkit of named idea-generation recipes, as data."""
        return cast("list[IdeaMethod]", await self._send("idea_methods", locals()))

    async def maintenance_report(self, stale_days: int = 365) -> MaintenanceReport:
        """The vault's chores: dead links, orphans with a note to link each to, stale
        notes (by frontmatter date), near-duplicates, a health score and archive candidates.
        """
        return cast("MaintenanceReport", await self._send("maintenance_report", locals()))

    async def apply_links(
        self, notes: Sequence[str] | None = None, dry_run: bool = True
    ) -> AppliedLinks:
        """Append a marked ``## Related (suggested)`` block of links to the orphans (or
        the named notes). A dry run (the default) returns the plan and writes nothing;
        a re-run replaces its own block, and nothing else in a note ever changes.
        """
        return cast("AppliedLinks", await self._send("apply_links", locals()))

    async def credit(self, ids: Sequence[str], outcome: str | int) -> int:
        """Log the outcome these memories drove, ``"good"`` or ``"bad"`` (or +1 / -1).

        The log is append-only and is what standing is earned from: give outcomes from
        the application, on real resolved work, never from recalled content grading
        itself. Only an independent outcome is banked: one given as the operator (a
        library caller, or a served key with the operator role). A served key without
        that role grades its own agent's memories, so its outcomes, however often
        repeated, are logged and not banked; so is one given while a memory is
        slashed. Returns how many outcomes were logged.
        """
        return cast("int", await self._send("credit", locals()))

    async def standing(self, ids: Sequence[str]) -> list[Standing]:
        """The standing of these memories: outcomes, sources, taint, slash and whether
        each passes the influence gate (``earned``), in order.
        """
        return cast("list[Standing]", await self._send("standing", locals()))

    async def influence_gate_report(self) -> GateReport:
        """What ``read(..., influence_only=True)`` would cost here: the fraction of
        active memories it would block, the breakdown of why, and advice.
        """
        return cast("GateReport", await self._send("influence_gate_report", locals()))

    async def slash(self, ids: Sequence[str], scope: str = "source") -> Lifecycle:
        """Forfeit standing: of these memories (``scope="memory"``) or of every memory
        sharing their canonical source or carrying it as taint (``"source"``). They
        fail the influence gate and are marked ``slashed``, stay readable, and
        ``restore(ids, scope=...)`` brings back their exact pre-slash standing.
        """
        return cast("Lifecycle", await self._send("slash", locals()))

    async def stale_derived(self) -> list[StaleDerived]:
        """Memories whose derived_from ancestry holds one since contradicted,
        superseded or slashed. One with a superseded or slashed ancestor is
        ``demoted``: it has no standing and a read halves its score until it is
        re-derived (written anew from sound parents) or re-credited (a banked good
        `credit`, which clears the troubles known then). Nothing here changes.
        """
        return cast("list[StaleDerived]", await self._send("stale_derived", locals()))

    async def set_checked_sources(self, sources: Sequence[str]) -> list[str]:
        """Name the sources evidence mode counts as checked for this scope's project and
        channel, replacing what was named there; returns them as counted (canonical:
        ``https://docs.example.com/x`` counts as ``example.com``). A read in evidence
        mode then admits a fact only from one of the sources named for the scopes it
        reads; with none named (``[]`` clears them), any named source counts. The
        operator's: a served key without that role gets `OperatorRequired`.
        """
        return cast("list[str]", await self._send("set_checked_sources", locals()))

    async def checked_sources(self) -> list[str]:
        """The sources evidence mode counts as checked for this scope's reads (canonical,
        sorted); empty when none is named, and then any named source counts.
        """
        return cast("list[str]", await self._send("checked_sources", locals()))

    async def verify_attribution(self, public_key: str | None = None) -> AttributionReport:
        """Check the write-receipt chain and every active memory's sources against it.

        The chain is intact unless a receipt was edited, dropped or re-linked
        (``broken_at`` names the first). A mismatch is an active memory whose current
        canonical sources (own source and inherited taint) differ from what its
        receipt committed: a relabel or a stripped taint. ``public_key`` (hex; default:
        this memory's ``receipt_key``'s) makes every receipt need a valid signature by
        it. Unsigned, the chain proves nothing against whoever can rewrite the store
        (they can recompute it); signed or not, it never proves a source was right.
        """
        return cast("AttributionReport", await self._send("verify_attribution", locals()))

    async def ratify(self, id: str, kind: str, by_key: str, lens: str | None = None) -> Ratified:
        """Record an external event on a claim: independent_witness, reproduction,
        prior_art_empty or audit, by the identity ``by_key`` through ``lens``.

        The claim's author cannot ratify it (`SelfRatification`); a repeated
        (by_key, kind, lens) is not stored again (``stored`` False) and adds nothing.
        """
        return cast("Ratified", await self._send("ratify", locals()))

    async def grade(self, id: str) -> Grade:
        """A claim's evidence grade (claimed, corroborated, verified, settled) and novelty.

        A pure function of its ratifications and corroboration: it moves only on
        events from parties other than the author, never on anything written.
        """
        return cast("Grade", await self._send("grade", locals()))

    async def spend_irreversible(
        self, ids: Sequence[str], amount: float, budget: float
    ) -> SpendResult:
        """Charge an irreversible action that used these memories to the lifetime
        budget of every source they carry (own and inherited); denied, charging
        nothing, if any source would pass ``budget``. Never refunded by `restore`.
        """
        return cast("SpendResult", await self._send("spend_irreversible", locals()))

    async def monitor(
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
        return cast("MonitorResult", await self._send("monitor", locals()))

    async def cases(self) -> list[Case]:
        """The open cases `monitor` raised against sources, oldest first."""
        return cast("list[Case]", await self._send("cases", locals()))

    async def convergence_report(self, id: str) -> ConvergenceReport:
        """Whether a claim is convergence-backed (independent origins agree, which is
        not truth) or adjudicated (a reproduction or audit by another identity), with
        ``low_source_diversity`` and a lineage grade capped at its weakest ancestor.
        """
        return cast("ConvergenceReport", await self._send("convergence_report", locals()))

    async def consolidate(self, keep: int | None = None) -> Consolidation:
        """The dream pass: flag hubs, link near-duplicates, supersede toggled states, keep a budget.

        It only adds a derived layer and never rewrites raw text: memories matching
        nearly every query are flagged as hubs; near-duplicates are linked, never
        merged; of two opposite statements of one subject's state ("the flag is on" /
        "the flag is off") the newer supersedes the older (`restore` brings it back).
        With ``keep``, at most that many memories stay active: the unprotected surplus
        with the lowest value × per-kind half-life decay is archived (reversibly:
        `restore`). A second pass over an unchanged store adds nothing.
        """
        return cast("Consolidation", await self._send("consolidate", locals()))

    async def consolidate_clusters(self, threshold: int = 15) -> ClusterConsolidation:
        """Consolidate each topic of episodic memories only once it has grown dense.

        Active episodic memories are grouped into topics by shared concepts; a topic
        of at least ``threshold`` memories gets the dream pass's duplicate, toggle and
        budget steps (its ``threshold`` most valuable stay active, the rest are
        archived, reversibly); sparser topics keep their raw episodes.
        """
        return cast("ClusterConsolidation", await self._send("consolidate_clusters", locals()))

    async def value_by_cohort(self, by: str = "tag") -> CohortValue:
        """Value reported per tag or per time block, never per memory.

        ``by`` is ``"tag"`` (default), ``"month"`` or ``"week"``; each cohort has its
        count of active memories, their mean value and the feedback outcomes they got.
        """
        return cast("CohortValue", await self._send("value_by_cohort", locals()))

    async def propose_procedure(
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
        return cast("Procedure", await self._send("propose_procedure", locals()))

    async def promote_procedure(self, id: str) -> Procedure:
        """Run the promotion gate: ≥ 2 covered successful episodes, no covered failed
        one (a counterexample), every check case answered as expected. A pass writes a
        ``procedural`` record referencing its episodes, preconditions and checks; a
        failure leaves it ``rejected`` with the reason.
        """
        return cast("Procedure", await self._send("promote_procedure", locals()))

    async def revise_procedure(
        self,
        id: str,
        steps: Sequence[Any] | None = None,
        preconditions: Mapping[str, Any] | None = None,
        checks: Sequence[Mapping[str, Any]] | None = None,
        episodes: Sequence[str] | None = None,
    ) -> Procedure:
        """Propose a new version of a procedure (what is not given is kept, episodes
        are added to its references) and run the gate on it: a pass supersedes the old
        version and its record; a failure leaves the old one in force.
        """
        return cast("Procedure", await self._send("revise_procedure", locals()))

    async def retire_procedure(self, id: str, retired: bool = True) -> Procedure:
        """Retire a promoted procedure (its record is archived), or bring it back."""
        return cast("Procedure", await self._send("retire_procedure", locals()))

    async def graduate(self) -> GraduationReport:
        """Graduate corroborated episodic memories to semantic: a helpful outcome
        (feedback summing above zero, or a good credit) or ≥ 2 distinct canonical
        sources. Its own kind or confidence never counts; each move is recorded with
        its evidence (`ungraduate` takes it back).
        """
        return cast("GraduationReport", await self._send("graduate", locals()))

    async def ungraduate(self, ids: Sequence[str]) -> Lifecycle:
        """Take back the graduation of these memories (semantic back to episodic)."""
        return cast("Lifecycle", await self._send("ungraduate", locals()))

    async def list_memories(
        self,
        limit: int = 50,
        offset: int = 0,
        kind: str | None = None,
        tag: str | None = None,
        status: str | None = None,
        source: str | None = None,
        where: Mapping[str, Any] | None = None,
    ) -> MemoryPage:
        """A page of memories, newest first, with the total that match (for paging).

        Every status and kind is listed unless ``kind`` or ``status`` names one;
        ``tag`` keeps memories carrying it, ``source`` those from that source (as
        written or canonical) and ``where`` is the filter grammar of `read`.
        ``limit`` is 1 to 500 and ``offset`` counts from the newest.
        """
        return cast("MemoryPage", await self._send("list_memories", locals()))

    async def feedback_log(
        self, limit: int = 50, offset: int = 0, memory_id: str | None = None
    ) -> FeedbackLog:
        """A page of the feedback log, newest call first, with the total (for paging).

        Each call says when it was given, in which scope, its outcome, the concepts its
        question was about and the memories it rated that are still readable here.
        ``memory_id`` keeps the calls that rated that memory (not readable here:
        `UnknownMemory`). ``limit`` is 1 to 500 and ``offset`` counts from the newest.
        """
        return cast("FeedbackLog", await self._send("feedback_log", locals()))

    async def inspect(self, id: str) -> Inspection:
        """One record with its key's history, the feedback that rated it, the entities
        it mentions and the declared relations it anchors or joins.

        Any status opens; an id not readable here raises `UnknownMemory`.
        """
        return cast("Inspection", await self._send("inspect", locals()))

    async def health(self) -> Health:
        """The store's health: counts by kind and status, sizes on disk, the embedder,
        vectors stored and pending, and the last feedback, in this scope's view.

        The sizes are the whole store's: a served key without the operator role gets
        None for them, since other tenants' writes move them.
        """
        return cast("Health", await self._send("health", locals()))

    async def update(
        self,
        id: str,
        tags: Sequence[str] | None = None,
        value: float | None = None,
        meta: Mapping[str, Any] | None = None,
        access: Sequence[str] | None = None,
        protected: bool | None = None,
    ) -> Record:
        """Change a memory's mutable fields by id, keeping its text; returns the record.

        Only the fields given change; naming none is `InvalidInput`. ``meta`` replaces
        the whole object (read the record, merge, and write it back to keep keys).
        The text, concepts and observation times stay, so the full-text index and
        the vector stay valid; the duplicate check keeps the observation as first
        written. A new ``access`` moves the memory to that access class. An id not
        readable here raises `UnknownMemory`.
        """
        return cast("Record", await self._send("update", locals()))

    async def export_all(self) -> Iterator[dict[str, Any]]:
        """The whole readable store as export lines: a versioned header, every record (of
        every status, oldest first, with ``superseded_by``), then learned links, lessons,
        taught totals, the feedback log, entities and relations (see `import_lines`).

        Vectors are not exported: an import re-embeds when an embedder is attached. The
        trust room's standing, receipts and cases, procedures, the vault index and the
        dream pass's derived layer are not carried either.
        """
        return cast("Iterator[dict[str, Any]]", await self._send("export_all", locals()))

    async def import_lines(
        self, lines: Sequence[Mapping[str, Any]], first_line: int = 1, rehome: bool = False
    ) -> ImportReport:
        """Import lines of `export` or `export_all` into this scope, keeping ids and times.

        A record keeps its id, times, status, supersession, valence and fields; one
        whose id (or observation) is already stored is skipped and counted. A link,
        lesson or taught total takes the exported state, so a file imported twice
        changes nothing; a logged feedback call already present is skipped; entities
        and relations are declared again (new ids). Records go into this memory's
        project and channel; a record of another agent is refused (field ``agent_id``)
        unless ``rehome`` takes it as this agent's own; a derived record inherits its
        parents' taint as a write would. An import carries no more authority than its
        caller: an entity or relation ``declared_by`` the operator is refused
        (`OperatorRequired`) for a caller without the operator role. Each bad line is
        reported with its number (counted from ``first_line``) and field; the rest is
        imported.
        """
        return cast("ImportReport", await self._send("import_lines", locals()))

    # -- end of the generated operations --
