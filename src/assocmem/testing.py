"""Test kit: a deterministic toy embedder that runs anywhere numpy does.

`ToyEmbedder` hashes each word (folded like concepts) into one of ``dims``
buckets: texts sharing words get similar vectors, so a test can reason about
the vector arm exactly. Register it through the real plugin path:
``register_embedder("toy", ToyEmbedder)``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from assocmem.optional import require_numpy
from assocmem.text.concepts import fold_word, tokenize
from assocmem.vectors.embedders import Embedder


class ToyEmbedder(Embedder):
    """Bag of hashed words. Parameters: ``dims`` (default 64), ``model_id`` suffix ``variant``."""

    batch_size = 16

    def __init__(self, *, dims: int = 64, variant: str = "") -> None:
        self.dims = dims
        self.model_id = f"toy-hash-{dims}{'-' + variant if variant else ''}"
        self.calls: list[int] = []

    def embed_batch(self, texts: Sequence[str]) -> Any:
        numpy = require_numpy()
        self.calls.append(len(texts))
        matrix = numpy.zeros((len(texts), self.dims), dtype=numpy.float32)
        for row, text in enumerate(texts):
            for word in tokenize(text):
                digest = hashlib.blake2b(fold_word(word).encode(), digest_size=4).digest()
                matrix[row, int.from_bytes(digest, "big") % self.dims] += 1.0
        return matrix
