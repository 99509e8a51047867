"""An embedder that knows a few synonyms, for tests of meaning without shared words.

Registered through the real plugin path (`register_embedder`), it places words of
one sense together exactly, so a test of meaning is fast and deterministic on both
backends; the benchmarks measure the same on real text with the default embedder.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from assocmem.text.concepts import fold_word, is_keyword, tokenize
from assocmem.vectors.embedders import Embedder, register_embedder, unregister_embedder

numpy = pytest.importorskip("numpy")

NAME = "synonyms"
# Words that mean one thing, as an embedder would place them.
SENSES = {
    "run": "jog run sprint dash",
    "far": "farther longer long distance far",
    "calm": "unwind relax calm soothe",
    "work": "office work job desk",
    "leg": "leg legs calf calves",
    "cramp": "cramp cramps spasm spasms",
    "cure": "cure remedy fix",
}
SENSE = {fold_word(w): sense for sense, words in SENSES.items() for w in words.split()}


class SynonymEmbedder(Embedder):
    """Bag of senses: each content word folded to its sense where it has one, then hashed."""

    dims = 256
    model_id = "test-synonyms-256"
    batch_size = 32

    def embed_batch(self, texts: Sequence[str]) -> Any:
        matrix = numpy.zeros((len(texts), self.dims), dtype=numpy.float32)
        for row, text in enumerate(texts):
            for word in filter(is_keyword, tokenize(text)):
                key = SENSE.get(fold_word(word), fold_word(word))
                digest = hashlib.blake2b(key.encode(), digest_size=4).digest()
                matrix[row, int.from_bytes(digest, "big") % self.dims] += 1.0
        return matrix


@pytest.fixture
def synonyms() -> Iterator[str]:
    """The embedder's name, registered for the test."""
    register_embedder(NAME, SynonymEmbedder)
    yield NAME
    unregister_embedder(NAME)
