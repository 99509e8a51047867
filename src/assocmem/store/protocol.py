"""The backend protocol: what the engine may ask of a store, and nothing more.

Invariant: the engine sees rows and records, never a connection, a cursor or a
backend exception (the shapes are in `rows.py`, re-exported here).
"""

from __future__ import annotations

import abc
from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from assocmem.schema import NewMemory
from assocmem.store.attribution_rows import CaseRow, MonitorRow, ReceiptRow
from assocmem.store.portable_rows import (
    ImportedMemory,
    LearnedLesson,
    LearnedLink,
    LearnedPrecedent,
    LoggedFeedback,
    TaughtConcept,
)
from assocmem.store.rows import (
    AskedRead,
    ConceptLessons,
    EntityRow,
    LinkRow,
    NoteLink,
    NoteRow,
    RankFields,
    RelationRow,
    VectorRows,
    View,
    new_id,
    new_public_id,
)
from assocmem.types import FeedbackCall, Record, Scope, Stats, WriteResult

if TYPE_CHECKING:
    import numpy as np

    from assocmem.store.procedures import ProcedureRow
    from assocmem.store.trust import TrustRow

__all__ = [
    "ConceptLessons",
    "EntityRow",
    "LinkRow",
    "NoteLink",
    "NoteRow",
    "RankFields",
    "RelationRow",
    "Store",
    "VectorRows",
    "View",
    "new_id",
    "new_public_id",
]


class Store(abc.ABC):
    """What the engine needs from a backend. All methods translate backend errors."""

    # Whether the backend searches vectors itself (`vector_search`); otherwise the
    # engine keeps them in its own numpy index.
    native_vectors: bool = False

    def vector_search(
        self, view: View, vector: Sequence[float], limit: int
    ) -> list[tuple[int, float]]:
        """``(seq, cosine)`` of the visible memories nearest ``vector`` (native backends)."""
        raise NotImplementedError("this backend has no native vector search")

    def vector_similarities(self, vector: Sequence[float], seqs: Sequence[int]) -> dict[int, float]:
        """Cosine of ``vector`` to each of these memories (native backends)."""
        raise NotImplementedError("this backend has no native vector search")

    @abc.abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction; nested calls become savepoints."""

    @abc.abstractmethod
    def snapshot(self) -> AbstractContextManager[None]:
        """A read transaction: the queries inside see one consistent state."""

    @abc.abstractmethod
    def write(
        self, scope: Scope, memories: Sequence[NewMemory], vectors: np.ndarray | None = None
    ) -> list[WriteResult]:
        """Store memories in one transaction, adding co-occurrence to their links;
        ``vectors`` (row i for memory i) are stored with them when given."""

    @abc.abstractmethod
    def layers(self, scope: Scope) -> list[int]:
        """Ids of the existing scope layers a reader in ``scope`` sees."""

    @abc.abstractmethod
    def visible(self, view: View, seqs: Sequence[int]) -> set[int]:
        """The memories among ``seqs`` that ``view`` may see."""

    @abc.abstractmethod
    def lexical(self, view: View, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
        """``(seq, BM25 score)`` of visible memories matching any of ``terms``, best first."""

    @abc.abstractmethod
    def thread_adjacency(
        self, view: View, seqs: Sequence[int]
    ) -> dict[int, tuple[int | None, int | None]]:
        """For each memory with a thread, the visible memories just before and after it."""

    @abc.abstractmethod
    def match_counts(self, scope: Scope, terms: Sequence[str], cap: int) -> dict[str, int]:
        """How many memories of the reader's layers (any status) the full-text index
        matches for each term, up to ``cap``: a statistic, like BM25's document
        frequency, that no other tenant's writes change. Counted below
        `lexical.COMMON_POSTINGS`; above, estimated from the newest memories, so the
        work is bounded (store/lexical.py)."""

    @abc.abstractmethod
    def size(self, scope: Scope | None = None) -> int:
        """How many memories the reader's layers hold (any status); with no scope, an
        upper bound on the whole store's, for readiness checks only (never a read's
        statistic: it counts other tenants)."""

    @abc.abstractmethod
    def fingerprint_matches(self, view: View, fingerprint: str, limit: int) -> list[int]:
        """Visible memories whose text has this fingerprint, newest first."""

    @abc.abstractmethod
    def authors(self, scope: Scope) -> list[str]:
        """Distinct authors of memories in the reader's layers (`forget` drops a name
        once no memory of its layer carries it)."""

    @abc.abstractmethod
    def touch(self, seqs: Sequence[int], when: str) -> None:
        """Record a read: restart these memories' decay clocks at ``when``."""

    @abc.abstractmethod
    def keep_access_clock_in(self, writer: Store) -> None:
        """Send every later `touch` to ``writer``: a store that only reads (a server's
        reader connection) then never writes, and reads still restart clocks."""

    @abc.abstractmethod
    def vector_changes(self, after: int) -> VectorRows:
        """The vectors changed after change number ``after`` (written, replaced, moved
        to another layer: in ``seqs``; deleted: in ``removed``), as of ``last``."""

    @abc.abstractmethod
    def vector_layers(self) -> tuple[int, dict[int, int]]:
        """The last change number and how many vectors each layer holds then."""

    @abc.abstractmethod
    def vector_layer_rows(self, layers: Sequence[int]) -> VectorRows:
        """Every stored vector of these layers, as of change number ``last``."""

    def vector_index_path(self) -> str | None:
        """Where a search index of this store's vectors may be kept on disk (a
        folder beside the store's file); None where there is no such place."""
        return None

    @abc.abstractmethod
    def vectors_of(self, seqs: Sequence[int]) -> dict[int, bytes]:
        """The stored float32 vectors of these memories, as bytes."""

    @abc.abstractmethod
    def missing_vectors(self, limit: int) -> list[tuple[int, int, str, str | None]]:
        """``(seq, scope layer, text, author)`` of memories stored without a vector."""

    # -- embed: the backfill's count, for its progress bar
    @abc.abstractmethod
    def count_missing_vectors(self) -> int:
        """How many memories are stored without a vector."""

    @abc.abstractmethod
    def add_vectors(self, rows: Sequence[tuple[int, int]], matrix: np.ndarray) -> None:
        """Store vectors for existing memories: ``rows[i] = (seq, layer)`` gets row i."""

    @abc.abstractmethod
    def info(self, key: str) -> str | None:
        """A fact recorded about the store, such as the embedder that filled it."""

    @abc.abstractmethod
    def set_info(self, key: str, value: str) -> None:
        """Record a fact about the store."""

    @abc.abstractmethod
    def keyed_records(self, view: View, limit: int) -> list[Record]:
        """Visible records whose meta carries numeric ``key`` and ``value`` lists."""

    @abc.abstractmethod
    def records(self, scope: Scope, ids: Sequence[str]) -> list[Record]:
        """The readable records among ``ids``, in the order given; unknown ids skipped."""

    @abc.abstractmethod
    def records_by_seq(self, seqs: Sequence[int]) -> dict[int, Record]:
        """Records by internal sequence number (callers got the seqs from a scoped query)."""

    @abc.abstractmethod
    def rank_fields(self, seqs: Sequence[int]) -> dict[int, RankFields]:
        """The ranking fields of memories by sequence number."""

    @abc.abstractmethod
    def visible_seqs(
        self, scope: Scope, ids: Sequence[str], statuses: Sequence[str] = ("active",)
    ) -> dict[str, int]:
        """Internal sequence numbers of the readable memories among ``ids`` (of these statuses)."""

    @abc.abstractmethod
    def concept_ids(self, names: Sequence[str]) -> dict[str, int]:
        """Ids of the known concepts among ``names``; unknown names are absent."""

    @abc.abstractmethod
    def concept_names(self, ids: Sequence[int]) -> dict[int, str]:
        """Names of concept ids."""

    @abc.abstractmethod
    def concept_forms(
        self, scope: Scope, concept_ids: Sequence[int], per_layer: int
    ) -> dict[int, dict[str, int]]:
        """How often each original spelling of each concept was written in the layers
        ``scope`` reads, counted over its newest ``per_layer`` uses in each layer."""

    @abc.abstractmethod
    def intern_concepts(self, names: Sequence[str]) -> dict[str, int]:
        """Ids for ``names``, creating the missing ones (inside a transaction)."""

    @abc.abstractmethod
    def concepts_of(self, seqs: Sequence[int]) -> dict[int, list[int]]:
        """Concept ids of each memory."""

    @abc.abstractmethod
    def neighbors(
        self, scope: Scope, concept_ids: Sequence[int], *, min_weight: float, limit: int
    ) -> list[tuple[int, int, float]]:
        """``(from, to, weight)`` for links out of ``concept_ids`` whose summed weight
        is at least ``min_weight``: strongest first, at most ``limit`` rows."""

    @abc.abstractmethod
    def links_between(
        self, scope: Scope, pairs: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], float]:
        """Summed weights of the given ``(a, b)`` pairs (a < b) in the reader's layers."""

    @abc.abstractmethod
    def links_around(self, scope: Scope, concept_ids: Sequence[int], limit: int) -> list[LinkRow]:
        """Every link touching ``concept_ids`` in the reader's layers, strongest first."""

    @abc.abstractmethod
    def adjust_links(
        self, scope: Scope, changes: Sequence[tuple[str, int, int, float]], outcome: float
    ) -> None:
        """Add each ``(access key, a, b, delta)`` to the scope's own layer of that access
        class, and record ``outcome``."""

    @abc.abstractmethod
    def lesson_weights(
        self, scope: Scope, pairs: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], float]:
        """The summed lesson weight of each ``(concept id, memory seq)`` that has one."""

    @abc.abstractmethod
    def add_lessons(
        self,
        scope: Scope,
        lessons: Sequence[tuple[str, int, int, float]],
        taught: Sequence[tuple[str, int, float]],
    ) -> None:
        """Add each ``(access key, concept, memory seq, delta)`` to a lesson, and each
        ``(access key, concept, outcome)`` to what that concept was taught, in the
        scope's own layer of that access class."""

    @abc.abstractmethod
    def lesson_taught(self, scope: Scope, concept_ids: Sequence[int]) -> dict[int, float]:
        """The summed helpful outcomes each concept was taught with (those that have any)."""

    @abc.abstractmethod
    def record_read(self, scope: Scope, read: AskedRead, returned: Sequence[int]) -> None:
        """Keep what a read asked and which memories it returned, in the reader's own
        layer (a reader connection hands it to its writer; a read-only store keeps
        nothing). Unrated reads past `reads.READS_KEPT` per layer are pruned."""

    @abc.abstractmethod
    def asked_read(self, scope: Scope, read_id: str) -> AskedRead | None:
        """A read kept in the reader's layers, or None."""

    @abc.abstractmethod
    def teach_read(self, read_id: str, rated: Sequence[tuple[int, float]]) -> None:
        """Add each ``(memory seq, outcome)`` to what that read was taught."""

    @abc.abstractmethod
    def rated_reads_mark(self, scope: Scope) -> tuple[int, int]:
        """How many rated reads the reader's layers hold and when the latest was first
        rated: it changes whenever one is rated, imported or deleted."""

    @abc.abstractmethod
    def rated_reads(
        self, scope: Scope, model: str, known: Collection[str]
    ) -> tuple[list[str], dict[str, bytes]]:
        """The ids of the reader's rated reads whose vector ``model`` made, and the
        vectors of those not among ``known`` (so a caller caches what it has)."""

    @abc.abstractmethod
    def learned_precedents(self, scope: Scope) -> list[LearnedPrecedent]:
        """The reader's rated reads that kept a vector, with what each readable memory
        was taught by them (for an export)."""

    @abc.abstractmethod
    def restore_precedents(self, scope: Scope, rows: Sequence[LearnedPrecedent]) -> list[bool]:
        """Restore exported precedents into ``scope``'s own layer; whether each was
        (False: none of its memories is readable here)."""

    @abc.abstractmethod
    def read_lessons(
        self, read_ids: Sequence[str]
    ) -> dict[str, tuple[tuple[str, ...], list[tuple[int, float]]]]:
        """For each read: its concept names and ``(memory seq, summed outcome)`` of
        what it was taught."""

    @abc.abstractmethod
    def concept_lessons(
        self, scope: Scope, concept_ids: Sequence[int], limit: int
    ) -> dict[int, ConceptLessons]:
        """What the reader's layers hold of lessons for each concept that has any."""

    @abc.abstractmethod
    def carried(self, scope: Scope, concept_ids: Sequence[int]) -> set[int]:
        """The concepts some memory in the reader's layers carries."""

    @abc.abstractmethod
    def access_of(self, seqs: Sequence[int]) -> dict[int, str]:
        """The access key (roles joined by newlines, '' for all) of each memory."""

    @abc.abstractmethod
    def memories_with_concepts(
        self,
        view: View,
        concept_ids: Sequence[int],
        *,
        per_concept: int,
        skip: Sequence[int] = (),
    ) -> list[tuple[int, int]]:
        """``(memory seq, concept id)`` for readable memories carrying each concept:
        the newest ``per_concept`` per concept, leaving out the memories (seqs) in
        ``skip``."""

    @abc.abstractmethod
    def move_valence(self, seqs: Sequence[int], outcome: float, rate: float) -> None:
        """Move each memory's valence a fraction ``rate`` of the way to ``outcome``."""

    @abc.abstractmethod
    def log_feedback(
        self,
        scope: Scope,
        access: str,
        ids: Sequence[str],
        concepts: Sequence[str],
        outcome: float,
    ) -> int:
        """Append one row to the feedback log in the scope's layer of ``access``; its
        public id (random: it counts nobody's calls)."""

    @abc.abstractmethod
    def scan(self, scope: Scope, *, after: int, limit: int) -> list[tuple[int, Record]]:
        """Readable active records in arrival order after sequence ``after``, paged."""

    @abc.abstractmethod
    def stats(self, scope: Scope) -> Stats:
        """Counts in the reader's view."""

    # -- the declared graph ------------------------------------------------------

    @abc.abstractmethod
    def find_entities(self, scope: Scope, normalized: str) -> list[EntityRow]:
        """Entities visible to the reader answering to this normalized name or alias in
        its layers, the nearest layer first (own, then wider), then by id; named as
        `entities_by_id` names them for this reader."""

    @abc.abstractmethod
    def create_entity(
        self,
        scope: Scope,
        name: str,
        normalized: str,
        declared_by: str,
        access: str = "",
        *,
        standalone: bool = False,
    ) -> int:
        """A new entity in the scope's own layer of ``access``; its name is its first alias
        (``standalone``: declared there with no memory, see `add_alias`)."""

    @abc.abstractmethod
    def add_alias(
        self,
        scope: Scope,
        entity_id: int,
        alias: str,
        normalized: str,
        access: str = "",
        *,
        standalone: bool = False,
    ) -> None:
        """Give an entity another alias in the scope's layer of ``access``; `AliasClash`
        when that layer already has it for another entity. ``standalone``: declared with
        no memory, which shows the entity to that layer's readers by itself."""

    @abc.abstractmethod
    def entity_in_layer(self, scope: Scope, normalized: str, access: str = "") -> int | None:
        """The entity the scope's own layer of ``access`` names so, if any."""

    @abc.abstractmethod
    def add_mention(self, entity_id: int, seq: int, declared_by: str) -> bool:
        """Record that a memory mentions an entity; False when it already did."""

    @abc.abstractmethod
    def add_relation(
        self,
        scope: Scope,
        subject: tuple[str, int],
        predicate: str,
        predicate_normalized: str,
        object_: tuple[str, int],
        anchor_seq: int,
        declared_by: str,
        access: str = "",
    ) -> int:
        """Store a relation in the scope's own layer of ``access`` (or find the same one);
        its public id (random, see `RelationRow`)."""

    @abc.abstractmethod
    def entities_by_id(
        self, ids: Sequence[int], scope: Scope | None = None
    ) -> dict[int, EntityRow]:
        """Entities by id. With ``scope``, only the aliases of the reader's layers, and
        the name among them (the stored name where none is readable)."""

    @abc.abstractmethod
    def aliases_in_scope(self, scope: Scope) -> list[tuple[str, int]]:
        """``(normalized alias, entity id)`` of the reader's layers, for entities visible
        to it."""

    @abc.abstractmethod
    def mentions_of(self, scope: Scope, seqs: Sequence[int]) -> dict[int, list[int]]:
        """The entities each readable memory is recorded as mentioning."""

    @abc.abstractmethod
    def mentioning(self, view: View, entity_id: int, limit: int) -> list[int]:
        """Visible memories that mention an entity, lowest sequence first, at most ``limit``."""

    @abc.abstractmethod
    def entity_relations(self, scope: Scope, entity_ids: Sequence[int]) -> list[RelationRow]:
        """Entity-to-entity relations in the reader's layers touching these entities."""

    @abc.abstractmethod
    def memory_relations(self, scope: Scope, seqs: Sequence[int]) -> list[RelationRow]:
        """Record-to-record relations in the reader's layers between these memories."""

    @abc.abstractmethod
    def retract(
        self, scope: Scope, relation_ids: Sequence[int], mentions: Sequence[tuple[int, int]]
    ) -> tuple[int, int]:
        """Remove relations (by public id) of the reader's layers and ``(entity, memory)``
        mentions by memories of them."""

    @abc.abstractmethod
    def delete_entities(self, scope: Scope, entity_ids: Sequence[int]) -> int:
        """Delete entities of the reader's layers; their aliases, mentions and relations go too."""

    @abc.abstractmethod
    def delete_memories(self, scope: Scope, seqs: Sequence[int]) -> int:
        """Delete memories for good, with everything that points at them, and subtract
        the co-occurrence they added to their layer's links."""

    # -- lifecycle ---------------------------------------------------------------

    @abc.abstractmethod
    def select(self, view: View, limit: int) -> list[int]:
        """Sequence numbers of the memories ``view`` sees, in arrival order."""

    @abc.abstractmethod
    def set_lifecycle(
        self,
        seqs: Sequence[int],
        *,
        status: str | None = None,
        protected: bool | None = None,
        recheck_by: str | None = None,
    ) -> None:
        """Change lifecycle fields (never text) of these memories."""

    @abc.abstractmethod
    def key_history(self, scope: Scope, subject: str, relation: str) -> list[int]:
        """Every readable memory holding this supersession key, oldest observation first."""

    # -- vault (vault/ room) --------------------------------------------------------
    # Keyed by the exact layer of ``scope`` (the vault's own scope), never its readable
    # layers: a vault belongs to one scope and is not inherited from a shared one.

    @abc.abstractmethod
    def vault_root(self, scope: Scope) -> str | None:
        """The folder this scope's vault was last indexed from, or None."""

    @abc.abstractmethod
    def vault_notes(self, scope: Scope) -> list[NoteRow]:
        """Every indexed note of this scope's vault, by path."""

    @abc.abstractmethod
    def vault_links(self, scope: Scope) -> list[NoteLink]:
        """Every link the vault's notes make, by source then target."""

    @abc.abstractmethod
    def save_vault(
        self,
        scope: Scope,
        root: str,
        notes: Sequence[NoteRow],
        links: Mapping[str, Sequence[NoteLink]],
        removed: Sequence[str],
    ) -> None:
        """In one transaction: remember ``root``, upsert ``notes``, drop the ``removed``
        notes with their links, and make ``links[source]`` the whole set of each
        source's links."""

    # -- evidence (SQL in store/evidence.py) --------------------------------

    @abc.abstractmethod
    def checked_sources(self, scope: Scope) -> list[str]:
        """The canonical sources named as checked for the scopes ``scope`` reads, sorted."""

    @abc.abstractmethod
    def name_checked_sources(self, scope: Scope, sources: Sequence[str]) -> None:
        """Make ``sources`` (canonical) the checked sources of ``scope``'s own project and
        channel, replacing what was named there (none: back to any named source)."""

    # -- standing (the trust room; SQL in store/trust.py) -------------------

    @abc.abstractmethod
    def add_credits(
        self, agent_id: str, seqs: Sequence[int], good: bool, when: str, independent: bool
    ) -> int:
        """Append one outcome per memory to the credit log; how many were appended.
        Banked (``counted``) only when ``independent`` and the memory is not slashed."""

    @abc.abstractmethod
    def credit_log(self, seqs: Sequence[int]) -> list[tuple[int, str, bool, bool, str]]:
        """``(seq, agent, good, counted, when)`` of these memories' credits, oldest first."""

    @abc.abstractmethod
    def trust_rows(self, seqs: Sequence[int]) -> dict[int, TrustRow]:
        """What the standing of each of these memories is computed from."""

    @abc.abstractmethod
    def trust_marks(self, ids: Sequence[str]) -> dict[str, tuple[bool, str | None]]:
        """``(slashed, attested key)`` of those of ``ids`` carrying either mark, by id."""

    @abc.abstractmethod
    def restating(self, view: View, fingerprints: Sequence[str]) -> dict[str, list[int]]:
        """The memories ``view`` sees holding each of these text fingerprints."""

    @abc.abstractmethod
    def sharing_sources(self, view: View, sources: Sequence[str]) -> list[int]:
        """The memories ``view`` sees whose canonical source or taint is one of ``sources``."""

    @abc.abstractmethod
    def view_sources(self, view: View) -> list[str]:
        """Every canonical source, own or inherited, among the memories ``view`` sees."""

    @abc.abstractmethod
    def add_taint(self, rows: Sequence[tuple[int, str]]) -> None:
        """Record ``(seq, canonical source)`` inherited through derived_from."""

    @abc.abstractmethod
    def add_attestation(self, seq: int, public_key: str, signature: str) -> None:
        """Record the verified attestation of a memory."""

    @abc.abstractmethod
    def slash_memories(self, seqs: Sequence[int], when: str) -> None:
        """Slash memories, saving each one's standing the first time."""

    @abc.abstractmethod
    def unslash_memories(self, seqs: Sequence[int]) -> int:
        """Lift the slash of these memories; how many were slashed."""

    @abc.abstractmethod
    def stale_cleared(self, seqs: Sequence[int]) -> dict[int, set[str]]:
        """The troubles a re-credit cleared for these memories (`trust.stale`), by seq."""

    @abc.abstractmethod
    def clear_stale(self, seq: int, reasons: Sequence[str]) -> None:
        """Record that a re-credit cleared these troubles of a memory (all it cleared)."""

    # -- trust: attribution (store/trust_attribution.py) ---------

    @abc.abstractmethod
    def receipt_head(self) -> tuple[int, str] | None:
        """``(position, hash)`` of the last write receipt, or None for an empty chain."""

    @abc.abstractmethod
    def append_receipt(self, receipt: ReceiptRow) -> None:
        """Append one receipt (inside the write transaction that stored its memory)."""

    @abc.abstractmethod
    def receipts_page(self, after: int, limit: int) -> list[ReceiptRow]:
        """Receipts after ``after`` in chain order, at most ``limit``."""

    @abc.abstractmethod
    def attributed_rows(self, scope: Scope) -> list[tuple[int, str, str, str | None, str | None]]:
        """``(seq, id, text, source, source_canonical)`` of the active memories read here."""

    @abc.abstractmethod
    def add_ratification(self, memory_id: str, kind: str, by_key: str, lens: str, now: str) -> bool:
        """Record a ratification; False when that (kind, by_key, lens) was already there."""

    @abc.abstractmethod
    def ratifications(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str, str]]]:
        """``(kind, by_key, lens)`` of each memory's ratifications, oldest first."""

    @abc.abstractmethod
    def monitor_state(self, agent_id: str, sources: Sequence[str]) -> dict[str, MonitorRow]:
        """The CUSUM state of each monitored source of an agent (absent: never seen)."""

    @abc.abstractmethod
    def set_monitor_state(self, agent_id: str, states: Sequence[MonitorRow], now: str) -> None:
        """Store the CUSUM state of each source."""

    @abc.abstractmethod
    def raise_case(
        self, agent_id: str, source: str, statistic: float, evidence: Sequence[str], now: str
    ) -> None:
        """Open a case against a source."""

    @abc.abstractmethod
    def open_cases(self, agent_id: str) -> list[CaseRow]:
        """An agent's open cases, oldest first."""

    @abc.abstractmethod
    def spent(self, agent_id: str, sources: Sequence[str]) -> dict[str, float]:
        """What each source has spent of its irreversible budget (absent: nothing)."""

    @abc.abstractmethod
    def charge(self, agent_id: str, sources: Sequence[str], amount: float) -> None:
        """Add ``amount`` to each source's spent irreversible budget, for good."""

    # -- consolidation (the dream pass's derived layer) -------------------

    @abc.abstractmethod
    def flag_hubs(self, shares: Sequence[tuple[int, float]]) -> list[int]:
        """Flag memories as universal-matcher hubs with the share of probes they matched;
        returns the seqs newly flagged (a flagged one is not flagged again)."""

    @abc.abstractmethod
    def link_near_duplicates(self, pairs: Sequence[tuple[int, int, float]]) -> int:
        """Link near-duplicate pairs ``(a, b, similarity)``; returns how many were new."""

    @abc.abstractmethod
    def revert_toggles(self, seqs: Sequence[int]) -> list[int]:
        """Bring back those of ``seqs`` the toggle guard superseded, marking each pair
        reverted so a later pass leaves it; returns the seqs restored."""

    @abc.abstractmethod
    def supersede_toggles(self, pairs: Sequence[tuple[int, int]]) -> list[int]:
        """Retire each active ``older`` memory in favour of ``newer`` (status and
        ``superseded_by`` only), recording the pair; returns the seqs retired."""

    @abc.abstractmethod
    def derived_layer(self, scope: Scope) -> dict[str, int]:
        """Counts of hub flags, near-duplicate links and toggles in the reader's layers."""

    @abc.abstractmethod
    def outcomes_of(self, seqs: Sequence[int]) -> dict[int, list[float]]:
        """The feedback outcomes each memory was rated with."""

    # -- procedures: procedure versions, graduation, earned reinforcement ----

    @abc.abstractmethod
    def add_procedure(self, scope: Scope, fields: dict[str, Any], when: str) -> str:
        """Insert a procedure version (``fields`` as `ProcedureRow`'s); its public id."""

    @abc.abstractmethod
    def procedures(self, scope: Scope, ids: Sequence[str]) -> dict[str, ProcedureRow]:
        """The procedure versions of ``ids`` the agent's scope sees, by id."""

    @abc.abstractmethod
    def procedures_named(self, scope: Scope, name: str) -> list[ProcedureRow]:
        """Every version of the procedures called ``name`` the scope sees, oldest first."""

    @abc.abstractmethod
    def set_procedure(
        self,
        seq: int,
        *,
        status: str,
        gate: dict[str, Any] | None = None,
        reason: str | None = None,
        memory_seq: int | None = None,
    ) -> None:
        """Set a procedure version's status (with its gate report, reason and record)."""

    @abc.abstractmethod
    def graduate_memories(
        self, rows: Sequence[tuple[int, str, str, dict[str, Any]]], when: str
    ) -> None:
        """Change each ``(seq, from_kind, to_kind, evidence)`` memory's kind, recorded."""

    @abc.abstractmethod
    def graduations(self, seqs: Sequence[int]) -> dict[int, tuple[int, str, str, dict[str, Any]]]:
        """The graduation in force of each of ``seqs``: ``(id, from, to, evidence)``."""

    @abc.abstractmethod
    def revert_graduations(self, rows: Sequence[tuple[int, int, str, str]], when: str) -> None:
        """Take back ``(seq, graduation id, from_kind, to_kind)`` graduations."""

    @abc.abstractmethod
    def reinforce(self, gains: Sequence[tuple[int, float]], cap: float) -> None:
        """Move each ``(seq, fraction)`` memory's value that fraction toward ``cap``."""

    # -- inspection (the inspect/ room; SQL in store/inspection.py) -----------

    @abc.abstractmethod
    def memory_page(
        self, view: View, source: str | None, limit: int, offset: int
    ) -> tuple[list[int], int]:
        """Seqs of one page of what ``view`` sees (with ``source`` its source or canonical
        source when given), newest created first, and how many match in all."""

    @abc.abstractmethod
    def feedback_page(
        self, scope: Scope, limit: int, offset: int, seq: int | None = None
    ) -> tuple[list[FeedbackCall], int]:
        """One page of the feedback calls in the reader's layers (that rated memory
        ``seq``, when given), newest first, each with the rated memories still in those
        layers; and how many calls match in all."""

    @abc.abstractmethod
    def feedback_calls(
        self, scope: Scope, *, seq: int | None = None, limit: int | None = None
    ) -> list[tuple[int, str, float, str]]:
        """``(public id, created_at, outcome, query concepts JSON)`` of the feedback calls
        in the reader's layers (that rated memory ``seq``, when given): oldest first, or
        the newest ``limit`` newest first."""

    @abc.abstractmethod
    def relations_of(self, scope: Scope, seq: int) -> list[RelationRow]:
        """Relations in the reader's layers anchored by memory ``seq`` or joining it."""

    @abc.abstractmethod
    def vector_counts(self, scope: Scope) -> tuple[int, int]:
        """How many memories of the reader's layers (any status) have a vector, and how
        many have none."""

    @abc.abstractmethod
    def operator_declared(
        self,
        scope: Scope,
        *,
        relation_ids: Sequence[int] = (),
        mentions: Sequence[tuple[int, int]] = (),
        entity_ids: Sequence[int] = (),
    ) -> bool:
        """Whether the operator declared any of these relations (by public id, in the
        reader's layers) or ``(entity, memory)`` mentions, or any of these entities or
        a mention or relation that deleting them would take along."""

    @abc.abstractmethod
    def storage(self) -> tuple[str, int, int | None]:
        """The backend's name, the store's size in bytes and its WAL's (None: not a file)."""

    # -- comforts: update, export and import ----------------------------------

    @abc.abstractmethod
    def update_memory(
        self, seq: int, columns: Mapping[str, Any], access: Sequence[str] | None = None
    ) -> None:
        """Assign these allow-listed columns (``tags value meta protected access``, as
        stored) of one memory, never its text; with ``access``, move it into the layer
        of that access class (refused, `InvalidInput` naming ``access``, where that
        layer holds the same observation or its key's active value)."""

    @abc.abstractmethod
    def records_for_export(
        self, scope: Scope, *, after: int, limit: int
    ) -> list[tuple[int, Record, str | None]]:
        """Readable records of every status after ``after``, in arrival order: ``(seq,
        record, id of the record that superseded it or None)``."""

    @abc.abstractmethod
    def learned_links(self, scope: Scope) -> list[LearnedLink]:
        """Every readable link, summed per access class and pair, pending counts included."""

    @abc.abstractmethod
    def learned_lessons(self, scope: Scope) -> tuple[list[LearnedLesson], list[TaughtConcept]]:
        """Every readable lesson and taught total, summed per access class."""

    @abc.abstractmethod
    def feedback_log(self, scope: Scope) -> list[LoggedFeedback]:
        """The readable feedback log, oldest call first."""

    @abc.abstractmethod
    def relations_in_scope(self, scope: Scope) -> list[RelationRow]:
        """Every declared relation of the reader's layers, oldest first."""

    @abc.abstractmethod
    def import_memories(self, scope: Scope, rows: Sequence[ImportedMemory]) -> list[str]:
        """Insert records keeping their ids and stored times, counting their
        co-occurrence; per row ``"imported"``, ``"present"`` (the id is stored),
        ``"duplicate"`` (the observation is) or ``"key_held"`` (an active record
        holds its key)."""

    @abc.abstractmethod
    def restore_links(self, scope: Scope, links: Sequence[LearnedLink]) -> None:
        """Set each pair's link in the importer's layer of its class to this state."""

    @abc.abstractmethod
    def restore_lessons(
        self, scope: Scope, lessons: Sequence[LearnedLesson], taught: Sequence[TaughtConcept]
    ) -> list[bool]:
        """Set these lessons and totals; per lesson, whether its memory was found."""

    @abc.abstractmethod
    def restore_feedback(self, scope: Scope, calls: Sequence[LoggedFeedback]) -> list[bool]:
        """Append these calls to the log; per call, False where its id is already there."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release connections. Safe to call twice."""
