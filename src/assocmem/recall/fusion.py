"""Rank fusion and the score folds after it: pure functions, no store access.

Invariants: fusion sees only ranks, never raw arm scores, so arms with unrelated
score scales (BM25, cosine, link weights) combine without calibration; each fold
after fusion (value, decay, valence, question form, preference) is a bounded
multiplier, so it reorders close candidates without burying what the arms agree
on; ties break on the key, so the same inputs always give the same order.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from assocmem.order import best_first

K = TypeVar("K", int, str)

# Reciprocal Rank Fusion constant from Cormack, Clarke & Büttcher (SIGIR 2009),
# who found k = 60 robust across collections; it damps the gap between top ranks.
RRF_K = 60.0

# The lexical, and for a read whose concepts come from its words the concept and
# learned-link arms, cast each vote times the share `weighing.WordEvidence` gives it:
# all of it when the words decide the question, less when they do not.

# Arm order: on equal rank, the earlier arm is named as an item's source.
ARM_ORDER: tuple[str, ...] = (
    "episodic", "lexical", "semantic", "concept_scoped", "learned", "precedent",
    "hebbian_retrieval", "thread", "lexical_expansion", "semantic_expansion",
)  # fmt: skip
_POSITION = {arm: i for i, arm in enumerate(ARM_ORDER)}
# Weight of each arm's vote. The three arms that match the question itself
# (words, meaning, exact concepts) vote fully. A memory reached through a learned
# link or because it sits next to a hit in its thread is one step removed from
# what was asked, so its vote counts half: it ranks below direct matches of
# similar rank, yet above the long tail of weak ones; a thread neighbour's vote is
# also never more than the profile's share of the fused score of the hit it borders
# (`pipeline._thread_arm`), so a neighbour supports what other arms found and cannot
# outrank a weak match on that match's account. The expansion arms (the
# searches again, widened by what the best hits share) are guesses built on a
# guess: half too. An exact fingerprint match
# is the question's own text stored as a memory: it votes double.
#
# The learned arm carries what outcomes taught (see `lessons`): an application
# said this memory answered questions with these concepts, which no retrieval
# guess can say. Each of its votes is scaled by the share of the question its
# lessons explain times how exclusively they name the memory (a word answered
# twelve ways names each answer a twelfth: `lessons.LearnedHit.confidence`). A
# vote explaining all of it, with lessons naming only this memory, weighs as much
# as every other non-exact arm of a text read together (1 + 1 + 0.25 + 0.25 +
# 0.5 · 3 = 4): ranked first, such a memory stands level with one that every other
# arm ranked first, and one explaining half the question stands with a memory both
# direct arms rank first. A vote a quarter as confident weighs one direct arm's:
# alone it ranks with what only one arm found. With no lesson for the question's
# concepts the arm is empty. The precedent arm reaches what outcomes taught by
# meaning instead (earlier rated reads near this question: see `precedents`; taught
# words the question's unknown words mean: see `meanings`), and
# weighs as much: what it carries is also what an outcome said. Each vote is
# scaled by the share of the nearby past questions that agree, by how likely an
# answer carries that far (past questions about other things can sit as near to a
# question as its rewordings do, and the consulted precedents show how near questions
# answered otherwise come), and by the part of the question its words leave open
# (`pipeline`): meaning is what a question needs when its words find nothing, not
# when they decide.
ARM_WEIGHTS: dict[str, float] = {
    "episodic": 2.0,
    "lexical": 1.0,
    "semantic": 1.0,
    "concept_scoped": 1.0,
    "learned": 4.0,
    "precedent": 4.0,
    "hebbian_retrieval": 0.5,
    "thread": 0.5,
    "lexical_expansion": 0.5,
    "semantic_expansion": 0.5,
}
# When a read's concepts were not given but pulled from the question's words, the
# concept arms see the same words the lexical arm already weighs (with IDF, which
# they lack): their votes are cut to a quarter so those words are not counted
# twice, while a memory they alone reach can still surface.
EXTRACTED_CONCEPT_WEIGHT = 0.25


def arm_weights(concepts_given: bool) -> dict[str, float]:
    """The arm weights for a read whose concepts were given, or extracted from its text."""
    if concepts_given:
        return dict(ARM_WEIGHTS)
    return {
        **ARM_WEIGHTS,
        "concept_scoped": EXTRACTED_CONCEPT_WEIGHT,
        "hebbian_retrieval": EXTRACTED_CONCEPT_WEIGHT,
    }


# Half-life of each kind, in days: episodic events fade in
# days, semantic facts in months, procedural rules barely at all; working memory
# belongs to the task at hand.
HALF_LIFE_DAYS: Mapping[str, float] = {
    "working": 1.0,
    "episodic": 7.0,
    "semantic": 180.0,
    "procedural": 3650.0,
}
# Reading a memory restarts its clock only while it is younger than this many
# half-lives: popularity can keep a fresh memory fresh, never revive a faded one.
ACCESS_RESET_WINDOW = 1.0
# ... and only once its clock has run a hundredth of a half-life (about 1.7 hours
# for an episodic memory): restarting a clock that has barely moved changes no
# score by more than 0.07%, and would turn every hot read into a write.
ACCESS_RESET_MIN = 0.01

# Bounds of the folds. A fully faded memory keeps 90% of its fused score, and
# a memory whose outcomes were bad keeps 90% of it: under RRF (k = 60) that is
# the gap between ranks about six places apart, so age and past outcomes reorder
# near neighbours but never overturn a clear ranking. Relevance multiplied by value
# and by decay outright cannot serve a long-term memory: an episode's decay
# halves weekly, so a plain product would make anything a few months old unfindable
# behind any fresh note that shares a word, and a caller's importance mark would
# outweigh what the question asks (`assocmem bench folds` measures both on
# conversations read in time).
#
# Valence only lowers. A good outcome says a memory answered one question, and
# the lessons it taught carry it to questions like that one; lifting it in every
# read would push a popular answer into questions it does not answer (measured by
# `assocmem bench learning`'s interference count). A bad outcome says it misled,
# which is worth a reader's caution wherever it comes up.
DECAY_WEIGHT = 0.1
VALENCE_WEIGHT = 0.1
# Importance: the score scales with ((1 + value) / 2) ** 0.25, so the default
# value 1 is neutral, value 3 lifts a memory by 19% and value 0 lowers it by 16%:
# enough to lift a marked memory over its near neighbours, not past what answers.
VALUE_EXPONENT = 0.25


# A memory that ends asking states nothing of what it asks: the answer, if any,
# is in what follows it (which thread smoothing already credits). Its form still
# matches a question's form, word for word and in embedding space, so where the
# read's profile folds questions (transcripts) it is folded down by the share of
# its words in those closing questions, within the same ±10% bound as decay and
# valence: a memory that is all question keeps 90% of its score.
QUESTION_WEIGHT = 0.1
_QUESTION_MARKS = "?？"  # ASCII and full-width
# A sentence: what runs up to its closing marks.
_CLOSERS = ".!。！" + _QUESTION_MARKS
_SENTENCE = re.compile(f"([^{_CLOSERS}]*)([{_CLOSERS}]*)")
_WORD = re.compile(r"\w+")


def smooth_along_threads(
    scores: Mapping[int, float],
    adjacency: Mapping[int, tuple[int | None, int | None]],
    *,
    forward: float,
    backward: float,
) -> dict[int, float]:
    """Each memory's score plus shares of the scores just before and after it in its thread.

    ``scores`` holds one arm's scores; ``adjacency`` maps a memory to the
    ``(previous, next)`` memory of its thread; ``forward`` is the share a memory
    gains from the one before it, ``backward`` from the one after (the read's
    profile sets both). What spreads is how far a score stands above the
    background, the median of the scores given: cosine similarity is well above
    zero even between unrelated texts, and a neighbour should inherit evidence,
    not that shared floor. Missing memories count as 0.
    """
    background = statistics.median(scores.values()) if scores else 0.0
    above = {seq: max(0.0, score - background) for seq, score in scores.items()}
    return along_threads(above, adjacency, forward=forward, backward=backward)


def along_threads(
    values: Mapping[int, float],
    adjacency: Mapping[int, tuple[int | None, int | None]],
    *,
    forward: float,
    backward: float,
) -> dict[int, float]:
    """Each memory's value plus ``forward`` times the value of the memory before it in
    its thread and ``backward`` times the one after, for every memory in ``values``
    or ``adjacency`` (missing memories count as 0)."""
    summed = {}
    for seq in set(values) | set(adjacency):
        before, after = adjacency.get(seq, (None, None))
        summed[seq] = (
            values.get(seq, 0.0)
            + forward * (values.get(before, 0.0) if before is not None else 0.0)
            + backward * (values.get(after, 0.0) if after is not None else 0.0)
        )
    return summed


@dataclass(frozen=True)
class Fused(Generic[K]):
    """One candidate after fusion: its score, its rank in each arm, its best arm."""

    key: K
    score: float
    ranks: dict[str, int]
    parts: dict[str, float]
    source: str


class Fusion(Generic[K]):
    """Weighted Reciprocal Rank Fusion, one arm's ranking at a time.

    Each ranking added casts its votes once; `ranked` orders every key voted for
    so far. A read fuses its first arms, seeds later arms from that order, and
    adds their votes to the same fusion instead of fusing everything again.
    """

    def __init__(
        self,
        *,
        weights: Mapping[str, float] | None = None,
        k: float | None = None,
        confidence: Mapping[str, Mapping[K, float]] | None = None,
    ) -> None:
        self._weights = ARM_WEIGHTS if weights is None else weights
        self._k = RRF_K if k is None else k
        self._confidence: dict[str, Mapping[K, float]] = dict(confidence or {})
        self._ranks: dict[K, dict[str, int]] = {}
        self._parts: dict[K, dict[str, float]] = {}

    def add(
        self,
        rankings: Mapping[str, Sequence[K]],
        *,
        confidence: Mapping[str, Mapping[K, float]] | None = None,
        caps: Mapping[str, Mapping[K, float]] | None = None,
    ) -> None:
        """Cast the votes of each arm's keys, best first (rank 1); an arm already
        added is not counted again. ``confidence`` adds arms' confidences to those
        the fusion was made with; a key's vote in an arm of ``caps`` is at most its
        cap there."""
        self._confidence.update(confidence or {})
        ranks, parts = self._ranks, self._parts
        for arm, keys in rankings.items():
            weight = self._weights.get(arm, 1.0)
            ceiling = (caps or {}).get(arm, {})
            trust = self._confidence.get(arm)  # None: every vote of the arm is whole
            for rank, key in enumerate(keys, start=1):
                by_arm = ranks.get(key)
                if by_arm is None:  # a key's first vote
                    by_arm = ranks[key] = {}
                    parts[key] = {}
                elif arm in by_arm:
                    continue
                by_arm[arm] = rank
                share = 1.0 if trust is None else max(0.0, min(1.0, trust.get(key, 1.0)))
                vote = weight * share / (self._k + rank)
                if key in ceiling:
                    vote = min(vote, ceiling[key])
                parts[key][arm] = vote

    def ranked(self, limit: int | None = None) -> list[Fused[K]]:
        """Every key voted for (the best ``limit`` of them, if given), best first."""
        return [self.fused(key) for key, _ in self.leaders(limit)]

    def leaders(self, limit: int | None = None) -> list[tuple[K, float]]:
        """Every key voted for (the best ``limit`` of them, if given) with its score, best
        first: the order of `ranked`, without the ranks and parts only a few will show."""
        totals = {key: sum(parts.values()) for key, parts in self._parts.items()}
        return [(key, totals[key]) for key in best_first(totals, limit)]

    def fused(self, key: K) -> Fused[K]:
        """A key's votes so far: its score, its rank and vote in each arm, its best arm."""
        by_arm, parts = self._ranks[key], self._parts[key]
        source = min(by_arm, key=lambda arm: (by_arm[arm], _POSITION.get(arm, len(_POSITION)), arm))
        return Fused(key, sum(parts.values()), dict(by_arm), dict(parts), source)


def rrf(
    rankings: Mapping[str, Sequence[K]],
    *,
    weights: Mapping[str, float] | None = None,
    k: float | None = None,
    confidence: Mapping[str, Mapping[K, float]] | None = None,
) -> list[Fused[K]]:
    """Weighted Reciprocal Rank Fusion of ranked key lists, best first.

    ``rankings`` maps an arm name to its keys, best first (rank 1). A key's score
    is the sum over arms of ``weight / (k + rank)``, times the arm's ``confidence``
    in that key (in [0, 1]; 1 where not given); its source is the arm where it
    ranked best (earlier in `ARM_ORDER` on ties). Equal scores order by key.
    """
    fusion: Fusion[K] = Fusion(weights=weights, k=k, confidence=confidence)
    fusion.add(rankings)
    return fusion.ranked()


def decay(kind: str, age_days: float) -> float:
    """How much of a memory of ``kind`` remains after ``age_days``: 1 → 0 by half-lives."""
    return float(0.5 ** (max(0.0, age_days) / HALF_LIFE_DAYS.get(kind, HALF_LIFE_DAYS["episodic"])))


def decay_factor(remaining: float, weight: float = DECAY_WEIGHT) -> float:
    """The score multiplier for a memory with ``remaining`` freshness in [0, 1]: a fully
    faded memory keeps ``1 - weight`` of its score (weight 1: the plain product)."""
    return 1.0 - weight * (1.0 - remaining)


def value_factor(value: float, exponent: float = VALUE_EXPONENT) -> float:
    """The score multiplier for a memory's importance ``value`` (1 is neutral;
    ``exponent`` 1 scales the score with ``(1 + value) / 2``, the plain product)."""
    return float(((1.0 + max(0.0, value)) / 2.0) ** exponent)


def valence_factor(valence: float) -> float:
    """The score multiplier for a memory's valence in [-1, 1]: below 1 for a memory
    whose outcomes were bad, 1 otherwise."""
    return 1.0 + VALENCE_WEIGHT * max(-1.0, min(0.0, valence))


def question_share(text: str) -> float:
    """The share of a text's words in the questions it ends with.

    Only closing questions count: a memory that ends asking awaits its answer,
    while one that asks and then answers ("How do I reset it? Hold the button.")
    states that answer.
    """
    if not any(mark in text for mark in _QUESTION_MARKS):
        return 0.0
    words = closing = 0
    for body, marks in _SENTENCE.findall(text):
        count = len(_WORD.findall(body))
        words += count
        if any(mark in marks for mark in _QUESTION_MARKS):
            closing += count
        elif count:
            closing = 0
    return closing / words if words else 0.0


def question_factor(share: float) -> float:
    """The score multiplier for a memory whose words are ``share`` question."""
    return 1.0 - QUESTION_WEIGHT * max(0.0, min(1.0, share))


def resets_clock(kind: str, age_days: float) -> bool:
    """Whether reading a memory of this age restarts its decay clock."""
    half_life = HALF_LIFE_DAYS.get(kind, HALF_LIFE_DAYS["episodic"])
    return ACCESS_RESET_MIN * half_life <= age_days < ACCESS_RESET_WINDOW * half_life
