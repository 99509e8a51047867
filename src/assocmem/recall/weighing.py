"""How much the word arms' votes are worth for this question: pure functions.

Rank fusion sees only ranks, so a memory that shares one everyday word with a
question votes as loudly as one holding every word the question turns on. When a
later remark relates to an earlier note by meaning and shares none of its words,
the lexical arm still returns its best matches, on whatever common words they
share, and fused with the semantic arm those matches push the note down: a
memory in both arms' top fifty outvotes any memory only one arm found.

So the read measures what the words have to go on. A memory's *coverage* is the
share of the question's word information it holds: each informative word of the
question weighed by its inverse document frequency in the reader's memories (the
IDF of Robertson and Spärck Jones, in the non-negative form Lucene uses), words
no memory holds included, since that the words asked for are not there is itself
a sign the words will not find the answer.

The words decide a question when some memory holds at least half of its word
information (`WORDS_DECIDE`): then the word arms vote as rank fusion always has,
which is what lets them lead when a question reuses its answer's words. When no
memory does, no word match is decisive, and each vote of a word arm counts for
its memory's coverage against that half: a memory sharing one common word with a
long remark barely votes, and the arms with better evidence for this question
(meaning, what outcomes taught) decide. The concept and learned-link arms of a
read whose concepts were pulled from its words are those words again and follow
the same rule; concepts a caller names are taken as given.

Coverage is computed from the memories' own words and the reader's document
counts, not from a backend's score, so it is the same on every backend.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence

from assocmem.recall.fusion import along_threads
from assocmem.text.concepts import fold_word, tokenize

# The share of a question's word information one memory must hold for the words to
# decide the question. Half: the memory holds more of what was asked than it lacks.
WORDS_DECIDE = 0.5


def idf(matched: int, size: int) -> float:
    """The inverse document frequency of a word ``matched`` by that many of ``size``
    memories: ln(1 + (N − n + ½) / (n + ½)), positive for any word."""
    matched = max(0, min(matched, size))
    return math.log(1.0 + (size - matched + 0.5) / (matched + 0.5))


class Coverage:
    """The question's words, weighed by IDF, against which memories are measured."""

    def __init__(self, terms: Sequence[str], counts: Mapping[str, int], size: int) -> None:
        weights: dict[str, float] = {}
        for term in terms:
            stem = fold_word(term)
            weights[stem] = max(weights.get(stem, 0.0), idf(counts.get(term, 0), size))
        self._weights = weights
        self._total = sum(weights.values())

    def of(self, text: str) -> float:
        """The share of the question's word information ``text`` holds, in [0, 1]."""
        if not self._total:
            return 0.0
        held = stems(text)
        return sum(w for stem, w in self._weights.items() if stem in held) / self._total


# Texts whose stems are kept: a read measures its candidates' texts, and the next read
# measures many of the same.
STEMS_KEPT = 4096


@functools.lru_cache(maxsize=STEMS_KEPT)
def stems(text: str) -> frozenset[str]:
    """The folded stems of a text's words."""
    return frozenset(fold_word(word) for word in tokenize(text))


def spread(
    coverage: Mapping[int, float],
    adjacency: Mapping[int, tuple[int | None, int | None]],
    *,
    forward: float,
    backward: float,
) -> dict[int, float]:
    """Coverage passed along threads as an arm's scores are (`fusion.smooth_along_threads`):
    a memory is worth its own coverage plus the profile's shares of its neighbours',
    at most 1. A neighbour ranked only for the match beside it inherits that share."""
    summed = along_threads(coverage, adjacency, forward=forward, backward=backward)
    return {seq: min(1.0, value) for seq, value in summed.items()}


class WordEvidence:
    """What the words have to go on in one read: each measured memory's coverage,
    and whether any memory holds enough of the question for the words to decide."""

    def __init__(self, coverage: Mapping[int, float]) -> None:
        self.coverage = dict(coverage)
        self.best = max(self.coverage.values(), default=0.0)
        self.decisive = self.best >= WORDS_DECIDE

    def weight(self, coverage: float) -> float:
        """The share of its vote a word match with this coverage casts: all of it when
        the words decide; else its coverage against `WORDS_DECIDE`."""
        return 1.0 if self.decisive else min(1.0, max(0.0, coverage) / WORDS_DECIDE)

    def votes(
        self, seqs: Iterable[int], coverage: Mapping[int, float] | None = None
    ) -> dict[int, float]:
        """The vote share of each memory an arm ranked, by its coverage (taken from
        ``coverage`` where given: a thread-spread coverage), 0 where unmeasured."""
        source = self.coverage if coverage is None else coverage
        return {seq: self.weight(source.get(seq, 0.0)) for seq in seqs}

    @property
    def arm(self) -> float:
        """The share of an arm that follows the question's words as a whole (learned
        links from them): its best match's coverage decides it."""
        return self.weight(self.best)
