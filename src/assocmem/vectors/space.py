"""The vector space: an embedder bound to the vectors it made in one database.

Invariants: the space holds no store: each call reads through the store it is
given, so a read's vector arm runs in that read's own snapshot. Its index
(`index.VectorIndex`: exact scans, and HNSW graphs for large layers) mirrors the
database's vector table, caught up with every writer's changes on each search;
rows are restricted to the reader's scope layers *before* any similarity is
computed, and the view's remaining conditions are applied to the candidates
before they are ranked. A backend that searches vectors itself (pgvector) does so
instead. No row is ever scanned in Python.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from assocmem.errors import EmbedderMismatch
from assocmem.optional import require_numpy
from assocmem.progress import bar
from assocmem.store import Store, View
from assocmem.vectors.embedders import Embedder
from assocmem.vectors.index import DEFAULT_SETTINGS, IndexedVectors, IndexSettings, VectorIndex
from assocmem.vectors.store import VectorQueries

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger(__name__)

# Memories embedded per transaction when filling in vectors a store lacks.
BACKFILL_BATCH = 256


class EmbeddingRules(Protocol):
    """What a read profile (`assocmem.recall.profiles.Profile`) decides about the text a
    memory is embedded from: the one rule of a profile that acts at write time. Declared
    here so that the space depends on that rule only, never on the room that reads."""

    @property
    def strip_speaker_label(self) -> bool: ...


@dataclass(frozen=True)
class _AsWritten:
    strip_speaker_label: bool = False


# Memories embedded from their text as written: the general profile's rule.
AS_WRITTEN: EmbeddingRules = _AsWritten()


class SearchedVectors(IndexedVectors, Protocol):
    """What a vector search reads: the index's rows, or the backend's own search."""

    native_vectors: bool

    def vector_search(
        self, view: View, vector: Sequence[float], limit: int
    ) -> list[tuple[int, float]]: ...

    def vector_similarities(
        self, vector: Sequence[float], seqs: Sequence[int]
    ) -> dict[int, float]: ...


class VectorSpace:
    """An embedder bound to the vectors it made, searched in whichever store a call names.

    A space holds no connection: every call that reads vectors takes the store
    (its connection, its snapshot) the caller is reading, so a read's vector arm
    sees what its other arms see. One space serves one database, through any of
    its connections. `checked` binds it: the store records the embedder's
    ``model_id`` and ``dims`` the first time it is opened with one; opening it later
    with another raises `EmbedderMismatch` rather than mixing two vector spaces.
    Memories written while no embedder was configured are embedded when a
    matching one is next attached.

    ``profile`` decides the text a memory is embedded from (`embedding_text`), so a
    store's vectors reflect the profile they were written with (a space reads only
    its `EmbeddingRules`); ``settings`` says how its index searches (`IndexSettings`:
    the layer size from which an HNSW graph serves, whether graphs are built on a
    thread of their own).
    """

    def __init__(
        self,
        embedder: Embedder,
        profile: EmbeddingRules = AS_WRITTEN,
        settings: IndexSettings = DEFAULT_SETTINGS,
    ) -> None:
        self.embedder, self.profile = embedder, profile
        self.index = VectorIndex(embedder.dims, embedder.model_id, settings)

    @classmethod
    def checked(
        cls,
        store: VectorQueries,
        embedder: Embedder,
        profile: EmbeddingRules = AS_WRITTEN,
        settings: IndexSettings = DEFAULT_SETTINGS,
    ) -> VectorSpace:
        """A space over ``store``'s database: the embedder checked against the one that
        filled it (or recorded as it), and the memories it lacks vectors for embedded.
        ``embedder`` first picks its form for the store (`Embedder.for_store`)."""
        space = cls(embedder.for_store(store.info("embedder_model")), profile, settings)
        space.guard(store)
        space.backfill(store)
        return space

    def with_profile(self, profile: EmbeddingRules) -> VectorSpace:
        """The same space (embedder and index shared) embedding memories as ``profile`` says."""
        if profile.strip_speaker_label == self.profile.strip_speaker_label:
            return self
        space = VectorSpace.__new__(VectorSpace)
        space.embedder, space.profile, space.index = self.embedder, profile, self.index
        return space

    def guard(self, store: Store) -> None:
        """Record this embedder in ``store``, or refuse one that differs from its record."""
        model, dims = store.info("embedder_model"), store.info("embedder_dims")
        if model is None:
            store.set_info("embedder_model", self.embedder.model_id)
            store.set_info("embedder_dims", str(self.embedder.dims))
        elif model != self.embedder.model_id or int(dims or 0) != self.embedder.dims:
            raise EmbedderMismatch(
                f"this store's vectors come from {model!r} ({dims} dims); the embedder "
                f"{self.embedder.model_id!r} ({self.embedder.dims} dims) would mix two "
                "vector spaces. Open it with the same embedder, or with none."
            )

    def embed(self, memories: Sequence[tuple[str, str | None]]) -> np.ndarray:
        """Unit vectors for memories given as ``(text, author)``, each embedded as
        `embedding_text` says under this space's profile."""
        return self.embedder.embed(
            [embedding_text(text, author, self.profile) for text, author in memories]
        )

    def backfill(self, store: VectorQueries) -> int:
        """Embed every memory ``store`` holds without a vector; returns how many.

        Attaching an embedder to a store of thousands of unembedded memories
        takes a minute or more, so the count is logged at INFO and a bar shows
        the work (`assocmem.progress`: on a terminal, or when asked for).
        """
        missing = store.count_missing_vectors()
        if not missing:
            return 0
        logger.info(
            "embedding %d memories stored without a vector (%s)", missing, self.embedder.model_id
        )
        done = 0
        with bar(missing, desc="embedding memories", unit="memory") as meter:
            while rows := store.missing_vectors(BACKFILL_BATCH):
                matrix = self.embed([(text, author) for _, _, text, author in rows])
                store.add_vectors([(seq, layer) for seq, layer, _, _ in rows], matrix)
                done += len(rows)
                meter.update(len(rows))
        return done

    def embed_query(self, text: str) -> np.ndarray:
        """The unit vector of a question."""
        return self.embedder.embed_one(text)

    def search(
        self, store: SearchedVectors, view: View, vector: np.ndarray, limit: int
    ) -> list[tuple[int, float]]:
        """``(seq, cosine)`` of the memories ``view`` sees in ``store`` nearest to
        ``vector``, best first."""
        if store.native_vectors:
            return store.vector_search(view, [float(v) for v in vector], limit)
        return self.index.search(store, view, vector, limit)

    def similarities(
        self, store: SearchedVectors, vector: np.ndarray, seqs: list[int]
    ) -> dict[int, float]:
        """Cosine of ``vector`` to each of these visible memories."""
        if store.native_vectors:
            return store.vector_similarities([float(v) for v in vector], seqs)
        return self.index.similarities(vector, seqs)

    def feedback_probe(
        self, store: SearchedVectors, vector: np.ndarray, seqs: list[int]
    ) -> np.ndarray:
        """Rocchio's probe: the question's vector plus the centroid of its best hits.

        The two weigh equally, then the sum is normalised. A question and the
        statements that answer it sit apart in embedding space; the centroid of
        the best hits moves the probe toward how answers are worded.
        """
        np = require_numpy()
        stored = store.vectors_of(seqs)
        if not stored:
            return vector
        rows = np.stack([np.frombuffer(b, dtype=np.float32) for b in stored.values()])
        probe = vector + rows.mean(axis=0)
        norm = float(np.linalg.norm(probe))
        return probe / norm if norm > 0 else vector


def embedding_text(text: str, author: str | None, profile: EmbeddingRules = AS_WRITTEN) -> str:
    """What a memory's vector is made from: its text as written, or, under a
    profile that strips speaker labels (transcripts), its text without a leading
    label naming its own author ("Ana: I swim on Sundays" gives "I swim on Sundays").

    Transcripts carry who spoke as such a label, while the author is a field of
    its own, preferred when a question names them (see `cues`). A question's probe
    drops the author names it uses that way; the memory's vector drops its own
    label, so that both describe what was said. Anything else, the author's name
    elsewhere in the text included, is embedded as written.
    """
    if not author or not profile.strip_speaker_label:
        return text
    label = re.match(rf"\s*{re.escape(author)}\s*:\s*", text, flags=re.IGNORECASE)
    if label is None or label.end() == len(text):
        return text
    return text[label.end() :]
