"""Lessons by meaning: a question's unknown words matched to the words outcomes taught.

Lessons (`lessons`) key what an outcome taught on the question's concepts, so a
later question must carry the same words to find it. A question that says the
same thing otherwise ("umpire" for "referee", "mouth organ" for "harmonica")
carries none of them. So each word of the question that no memory of the reader
holds and no lesson was taught looks up, by the attached embedder, the taught
words nearest it in meaning, and those stand in for it: their lessons vote for
the memories they were taught. Word against word is sharper than question
against question: a sentence embedding of a question is much of it its frame
("how do I fix", "any tips for"), which questions share, while a word and its
synonym sit far nearer each other than either sits to the rest of a vocabulary.
Two unknown words next to each other in one clause are also read as one phrase,
and kept as one where the phrase stands in more surely than either word.

How near is near depends on the embedder and on the vocabulary, so no cosine is
fixed. A word's stand-ins are the taught words nearer it than its `NEAREST`-th
nearest. Each is ranked among each taught word's nearest other taught word (a
conformal test: taught words are mostly not rewordings of each other, so that is
how near a word with no synonym among them gets), twice: by how far the word stands
out toward it from the rest of the vocabulary (in standard deviations of the
word's similarities), and by how near it is. A stand-in is as sure as the lower
rank: it must pass both. Standing out alone is not enough, as a word whose
similarities to the vocabulary are all low and close together (an abstract word
against concrete ones: "recommendations") stands out far toward whatever it is
least far from; nearness alone is not either, as a word near the whole vocabulary
is near everything. Until more words than `NEAREST` were taught, nothing says how
near an unrelated word comes, and the arm is empty.

A memory's confidence is the part of the question's unknown words that stand in
for words taught to it: each word counts its surest stand-in's sureness times the
memory's share of that word's helpful outcomes times the word's information (as
the learned arm weighs a concept: a filler taught with every answer says little),
over what each word could say at most; and all that times the part of the
question's words that are unknown (what its meaning must carry: a question whose
other words the memories hold is read by them).

A read with no embedder does not have this arm, and neither does a store with no
lessons. The vectors are the embedder's, kept in this process for the words a
scope was taught (never stored: what was taught is the lessons, and forgetting
them forgets what their words meant here).
"""

from __future__ import annotations

import bisect
import math
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from assocmem.links.lessons import LESSONS_PER_CONCEPT
from assocmem.optional import require_numpy
from assocmem.store import ConceptLessons, View
from assocmem.text.concepts import normalize_concept, tokenize
from assocmem.types import Scope, Via

if TYPE_CHECKING:
    import numpy as np

# A word's background is its similarity to its NEAREST-th nearest taught word: the
# few nearer stand in for it, the rest of the vocabulary is what an unrelated word
# comes to. Few enough that a word's stand-ins are its near-synonyms, not its topic.
NEAREST = 10
# Untaught words of one question read by meaning, the first ones: a question longer
# than this is a passage, and its meaning as a whole is the precedents' to read.
WORDS_READ = 32
# Stand-ins a result names in `via`, best first.
SHOWN = 3
# Taught words sampled, evenly by id, for the null (see `_null`): enough for its
# quantiles, few enough that measuring it again after new words were taught costs
# a small part of a read.
CALIBRATION = 256
# What ends a clause: a phrase is read within one.
_CLAUSE = re.compile(r"[,;:.!?()\[\]{}\"]")
# Question words whose vectors are kept per embedder: words recur from read to read.
WORDS_KEPT = 4096


class TaughtWords(Protocol):
    """What the arm reads: the concepts lessons were taught in the reader's layers,
    which words the reader's memories hold, the taught concepts' lessons, and which
    memories the reader sees."""

    def taught_concepts(self, scope: Scope) -> dict[int, str]: ...

    def match_counts(self, scope: Scope, terms: Sequence[str], cap: int) -> dict[str, int]: ...

    def concept_lessons(
        self, scope: Scope, concept_ids: Sequence[int], limit: int
    ) -> dict[int, ConceptLessons]: ...

    def visible(self, view: View, seqs: Sequence[int]) -> set[int]: ...


Embed = Callable[[Sequence[str]], "np.ndarray"]


@dataclass(frozen=True)
class StandIn:
    """A taught word standing in for a word of the question: ``sureness`` in (0, 1)
    is the share of taught words whose nearest other taught word both stands out
    less from the rest and is less near than this one is to the question word, the
    lower of the two (see the module docstring)."""

    concept_id: int
    sureness: float


@dataclass(frozen=True)
class MeaningHit:
    """A memory the words taught to it stand in for.

    ``confidence`` in [0, 1] is the part of the question's unknown words, by their
    information, that stand in for words taught to it, each counted by its
    sureness times the memory's share of the taught word's helpful outcomes, times
    the part of the question's words that are unknown (see the module docstring);
    ``stand_ins`` are ``(question word, stand-in)`` of those words, best first.
    """

    seq: int
    confidence: float
    stand_ins: tuple[tuple[str, StandIn], ...]


@dataclass(frozen=True)
class Reading:
    """A question's unknown words as the taught words that stand in for them (kept
    phrases as one word), and the part of its words they are (``unknown``)."""

    stand_ins: dict[str, list[StandIn]]
    unknown: float

    @property
    def concept_ids(self) -> list[int]:
        """The taught words whose lessons the reading needs."""
        return sorted({s.concept_id for found in self.stand_ins.values() for s in found})


def reading(
    store: TaughtWords,
    view: View,
    model: str,
    embed: Embed,
    words: Sequence[str],
    question: str,
    show: Callable[[Mapping[int, str]], Mapping[int, str]],
) -> Reading | None:
    """The stand-ins of the question's ``words`` that no memory of the reader holds and
    no lesson was taught, or None when there are none (or too few taught words to
    tell); two such words next to each other in ``question`` are read as a phrase
    too. ``show`` spells concepts as the scope writes them (an embedder knows words,
    not stems)."""
    taught = store.taught_concepts(view.scope)
    if len(taught) <= NEAREST:
        return None
    stems = set(taught.values())
    untaught = [w for w in dict.fromkeys(words) if normalize_concept(w) not in stems][:WORDS_READ]
    held = store.match_counts(view.scope, untaught, 1) if untaught else {}
    order = [w for w in untaught if not held.get(w)]
    if not order:
        return None
    vocabulary = _vocabulary(store, view.scope, model, taught, embed, show)
    pairs = _pairs(question, set(order))
    found = _stand_ins(vocabulary, order + pairs, _vectors(model, embed, order + pairs))
    return Reading(_phrased(order, found), len(order) / len(set(words)))


def _pairs(question: str, unknown: set[str]) -> list[str]:
    """Two unknown words next to each other in the question, within one clause (a
    phrase does not run across a comma), as phrases."""
    pairs = []
    for clause in _CLAUSE.split(question):
        tokens = tokenize(clause)
        pairs += [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)
                  if a in unknown and b in unknown]  # fmt: skip
    return list(dict.fromkeys(pairs))


def hits(store: TaughtWords, view: View, reading: Reading) -> list[MeaningHit]:
    """Readable memories the stand-ins' lessons vote for, best first (ties: newest
    first)."""
    stand_ins = reading.stand_ins
    wanted = reading.concept_ids
    lessons = store.concept_lessons(view.scope, wanted, LESSONS_PER_CONCEPT) if wanted else {}
    reached = {
        word: [s for s in found if s.concept_id in lessons] for word, found in stand_ins.items()
    }
    reached = {word: found for word, found in reached.items() if found}
    if not reached:
        return []
    # A stand-in counts by its information among the memories the question's words
    # reach, each word through its surest stand-in (as the learned arm counts a
    # concept among the memories the question's own lessons reach).
    surest = [max(found, key=lambda s: s.sureness) for found in reached.values()]
    pool = len({seq for s in surest for seq, _ in lessons[s.concept_id].strongest})
    info = {c: math.log1p(pool / taught_word.spread) for c, taught_word in lessons.items()}
    whole = sum(max(s.sureness * info[s.concept_id] for s in found) for found in reached.values())
    if whole <= 0:
        return []
    votes: dict[int, dict[str, tuple[float, StandIn]]] = {}
    for word, found in reached.items():
        for s in found:
            taught_word = lessons[s.concept_id]
            for seq, lesson in taught_word.strongest:
                share = lesson / max(taught_word.taught, lesson)
                vote = s.sureness * share * info[s.concept_id]
                best = votes.setdefault(seq, {}).get(word)
                if best is None or vote > best[0]:
                    votes[seq][word] = (vote, s)
    found_hits = []
    for seq in store.visible(view, sorted(votes)):
        by_word = votes[seq]
        score = reading.unknown * sum(vote for vote, _ in by_word.values()) / whole
        ordered = sorted(by_word.items(), key=lambda kv: (-kv[1][0], kv[0]))
        found_hits.append(MeaningHit(seq, min(1.0, score), tuple((w, s) for w, (_, s) in ordered)))
    found_hits.sort(key=lambda hit: (-hit.confidence, -hit.seq))
    return [hit for hit in found_hits if hit.confidence > 0]


def _stand_ins(
    vocabulary: _Vocabulary, words: Sequence[str], vectors: Any
) -> dict[str, list[StandIn]]:
    """The taught words standing in for each of ``words``: those nearer it than its
    `NEAREST`-th nearest, each as sure as it stands out from the rest and is near."""
    np = require_numpy()
    similarity = vectors @ vocabulary.matrix.T
    found: dict[str, list[StandIn]] = {}
    for row, word in enumerate(words):
        near = similarity[row]
        spread = float(near.std())
        if spread <= 0:
            continue
        background = np.partition(near, -NEAREST)[-NEAREST]
        standing = (near - float(near.mean())) / spread
        found[word] = [
            StandIn(vocabulary.ids[i], vocabulary.sureness(float(standing[i]), float(near[i])))
            for i in np.flatnonzero(near > background)
        ]
    return found


def _phrased(order: Sequence[str], read: Mapping[str, list[StandIn]]) -> dict[str, list[StandIn]]:
    """The question's untaught words in order, two adjacent ones read as one phrase
    where the phrase stands in for a taught word more surely than either word does
    ("mouth organ" for "harmonica", where "organ" alone is far from it)."""

    def surest(text: str) -> float:
        return max((s.sureness for s in read.get(text, ())), default=0.0)

    kept: dict[str, list[StandIn]] = {}
    i = 0
    while i < len(order):
        if i + 1 < len(order):
            phrase = f"{order[i]} {order[i + 1]}"
            if phrase in read and surest(phrase) > max(surest(order[i]), surest(order[i + 1])):
                kept[phrase] = read[phrase]
                i += 2
                continue
        if order[i] in read:
            kept[order[i]] = read[order[i]]
        i += 1
    return kept


def via(hit: MeaningHit, names: Mapping[int, str]) -> tuple[Via, ...]:
    """The `Via` records of a hit by meaning: each taught word that stood in, with its
    sureness; the path runs from the question's word (or phrase) to it."""
    return tuple(
        Via(names[s.concept_id], round(s.sureness, 6), (word, names[s.concept_id]))
        for word, s in hit.stand_ins[:SHOWN]
    )


@dataclass
class _Vocabulary:
    """A scope's taught words as one model embedded them: ids in row order, and for
    each sampled taught word its nearest other, how far it stands out from the rest
    (``standing``) and how near it is (``nearness``), each sorted: how far and how
    near a word with no synonym among them gets."""

    ids: list[int]
    matrix: Any
    vectors: dict[int, Any]
    standing: list[float]
    nearness: list[float]

    def sureness(self, standing: float, similarity: float) -> float:
        """The share of the taught words' nearest others that a stand-in this far out
        and this near beats on both counts, the lower share, by Laplace's rule of
        succession."""
        below = min(
            bisect.bisect_left(self.standing, standing),
            bisect.bisect_left(self.nearness, similarity),
        )
        return (below + 1) / (len(self.standing) + 2)


def _null(matrix: Any) -> tuple[list[float], list[float]]:
    """For each of an even sample of taught words, its nearest other taught word: how
    far that stands out from the rest, in standard deviations of its similarities,
    and how near it is; each list sorted."""
    np = require_numpy()
    rows = np.unique(np.linspace(0, len(matrix) - 1, min(len(matrix), CALIBRATION)).round())
    rows = rows.astype(np.intp)
    similarity = matrix[rows] @ matrix.T
    own = similarity[np.arange(len(rows)), rows].astype(np.float64)
    others = len(matrix) - 1  # each word's similarities to the rest, itself left out
    mean = (similarity.sum(axis=1, dtype=np.float64) - own) / others
    square = (np.square(similarity).sum(axis=1, dtype=np.float64) - own**2) / others
    spread = np.sqrt(np.maximum(square - mean**2, 0.0))
    similarity[np.arange(len(rows)), rows] = -np.inf
    best = similarity.max(axis=1).astype(np.float64)
    kept = spread > 0
    standing = sorted(((best[kept] - mean[kept]) / spread[kept]).tolist())
    return standing, sorted(best[kept].tolist())


# Per store: (scope, model) -> its taught words' vectors.
_CACHE: weakref.WeakKeyDictionary[TaughtWords, dict[tuple[Scope, str], _Vocabulary]] = (
    weakref.WeakKeyDictionary()
)
_LOCK = threading.Lock()
# Per model: question word -> its vector, least recently used dropped first.
_WORDS: dict[str, OrderedDict[str, Any]] = {}


def _vocabulary(
    store: TaughtWords,
    scope: Scope,
    model: str,
    taught: Mapping[int, str],
    embed: Embed,
    show: Callable[[Mapping[int, str]], Mapping[int, str]],
) -> _Vocabulary:
    """The vectors of the words taught in ``scope``: kept per store, and only the
    words taught since embedded (each spelled as the scope wrote it when this
    process first embedded it)."""
    np = require_numpy()
    with _LOCK:
        kept = _CACHE.setdefault(store, {}).get((scope, model))
    ids = sorted(taught)
    if kept is not None and kept.ids == ids:
        return kept
    vectors = dict(kept.vectors) if kept is not None else {}
    new = {i: taught[i] for i in ids if i not in vectors}
    if new:
        spelled = show(new)
        order = sorted(new)
        for i, vector in zip(order, embed([spelled[i] for i in order]), strict=True):
            vectors[i] = vector
    vectors = {i: vectors[i] for i in ids}
    matrix = np.stack([vectors[i] for i in ids])
    # Measured again whenever the vocabulary changed, so that what a read finds
    # depends on what was taught, not on which reads this process ran before.
    fresh = _Vocabulary(ids, matrix, vectors, *_null(matrix))
    with _LOCK:
        _CACHE.setdefault(store, {})[(scope, model)] = fresh
    return fresh


def _vectors(model: str, embed: Embed, words: Sequence[str]) -> Any:
    """Unit vectors of ``words``, those asked recently taken as kept."""
    np = require_numpy()
    with _LOCK:
        kept = _WORDS.setdefault(model, OrderedDict())
        have = {word: kept[word] for word in words if word in kept}
    missing = [word for word in dict.fromkeys(words) if word not in have]
    if missing:
        have.update(zip(missing, embed(missing), strict=True))
    with _LOCK:
        for word in words:
            kept[word] = have[word]
            kept.move_to_end(word)
        while len(kept) > WORDS_KEPT:
            kept.popitem(last=False)
    return np.stack([have[word] for word in words])
