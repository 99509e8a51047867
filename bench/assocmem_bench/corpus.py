"""The synthetic corpus the speed benchmarks draw from: pronounceable words with Zipf frequencies.

Word frequencies follow Zipf's law (s = 1.07, the classic fit for English word
frequencies), so a few words are in a large share of memories and every index
that keys on words is stressed the way real notes stress it. The same seed gives
the same words, memories and queries in every process.
"""

from __future__ import annotations

import random
from itertools import accumulate
from typing import Any

VOCABULARY = 20_000
ZIPF_S = 1.07

_ONSETS = ["b", "br", "c", "ch", "d", "f", "g", "gr", "k", "l", "m", "n", "p", "pl", "r", "s",
           "sh", "st", "t", "tr", "v", "w", "z"]  # fmt: skip
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ou"]
_CODAS = ["", "n", "r", "s", "t", "l", "m", "nd", "rk", "st"]


def vocabulary(size: int, rng: random.Random) -> list[str]:
    """``size`` distinct pronounceable words."""
    words: dict[str, None] = {}
    while len(words) < size:
        syllables = rng.choice((2, 2, 3, 3, 4))
        word = "".join(
            rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables)
        )
        words.setdefault(word)
    return list(words)


class Corpus:
    """Draws memories and queries from a Zipf-weighted vocabulary of ``size`` words."""

    def __init__(self, rng: random.Random, size: int = VOCABULARY) -> None:
        self.rng = rng
        self.words = vocabulary(size, rng)
        self.cumulative = list(accumulate(1 / (rank**ZIPF_S) for rank in range(1, size + 1)))

    def draw(self, count: int) -> list[str]:
        """``count`` distinct words, each drawn by its Zipf weight."""
        picked: dict[str, None] = {}
        while len(picked) < count:
            picked.setdefault(self.rng.choices(self.words, cum_weights=self.cumulative)[0])
        return list(picked)

    def memory(self, index: int) -> dict[str, Any]:
        """A note of 3 to 8 concepts, given explicitly, in a sentence that names its index."""
        concepts = self.draw(self.rng.randint(3, 8))
        text = f"Note {index}: " + " ".join(concepts) + " observed during routine work."
        return {"text": text, "concepts": concepts}
