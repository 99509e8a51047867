"""Lessons: what outcomes taught about which memory answers which concepts.

A helpful rating of a memory for a question teaches that memory the question's
concepts (query-log document expansion): a later question carrying them finds
the memory even when its text shares no word with them. Lessons are kept apart
from co-occurrence, so their weight means only "an outcome said so".

A read asks two questions of the lessons its concepts reach. Sharply: of the
question's taught concepts, do they point at this memory (it answered them more
often than not, or more often than any other)? That is what one or a few
outcomes can say, and it leaves the question's untaught words to the arms that
read words and meaning. Broadly: was this memory taught most of what the question
asks, its untaught words counted too? That holds when several past questions
share answers, where no single memory holds most of a concept's outcomes. The
larger reading is the memory's support.

Every memory the lessons give some support votes in fusion, as loud as two
things together. Support says how much of the question its lessons explain; it
says nothing of how many other memories the same lessons name. A memory that is
one of twelve answers given to questions about a word holds a twelfth of what
that word taught, and a question carrying the word says that much about it,
whatever its support. So a vote counts support times how exclusively the lessons
point at this memory (its concentration): full where every past question with
these words had this answer, a fraction where the words were answered many ways
or explain little of the question. The sharp reading already counts each concept
by this memory's share of it, so it is not scaled twice: an answer rated right
three times in five, two wrong ratings scattered elsewhere, keeps three fifths
of its vote. Evidence this graded needs no cut-off: a
partial vote is small (a quarter as confident, it weighs as one direct arm's),
so alone it ranks with what only one arm found, and beside a direct match it
counts as one more arm agreeing.

Invariants: a lesson's weight, summed over the layers a reader sees, never drops
below zero; a read weighs each of its concepts by how sharply its lessons point
(a filler taught with every answer points nowhere), so reads with no lesson for
their concepts are exactly what they were; lessons persist with the store and are
never rebuilt from the notes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from assocmem.store import ConceptLessons, View
from assocmem.types import Scope, Via

# Lessons read per concept, heaviest first: a concept whose lessons point at more
# memories than this is spread too thin to lift any one of them.
LESSONS_PER_CONCEPT = 64
# A memory holding more than this share of a concept's helpful outcomes leads it:
# it helped more often than not when the concept was asked about (memories rated
# together in one call each hold the whole call). So does the one memory rated for
# it more often than any other, so that wrong ratings scattered over other memories
# do not silence the answer most ratings gave.
MAJORITY = 0.5


class LessonWrites(Protocol):
    """What teaching reads and moves: the lessons of rated memories, and how much each
    concept was taught."""

    def lesson_weights(
        self, scope: Scope, pairs: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], float]: ...

    def lesson_taught(self, scope: Scope, concept_ids: Sequence[int]) -> dict[int, float]: ...

    def add_lessons(
        self,
        scope: Scope,
        lessons: Sequence[tuple[str, int, int, float]],
        taught: Sequence[tuple[str, int, float]],
    ) -> None: ...


class LessonReads(Protocol):
    """What the learned arm reads: the lessons a question's concepts were taught, and
    which of their memories the reader sees."""

    def concept_lessons(
        self, scope: Scope, concept_ids: Sequence[int], limit: int
    ) -> dict[int, ConceptLessons]: ...

    def visible(self, view: View, seqs: Sequence[int]) -> set[int]: ...


@dataclass(frozen=True)
class Lesson:
    """One concept a memory was taught: its weight, its share of that concept's
    helpful outcomes, and whether it leads them (no other memory was rated as often
    for the concept)."""

    concept_id: int
    weight: float
    share: float
    leads: bool = False


@dataclass(frozen=True)
class LearnedHit:
    """A memory the question's concepts were taught to point at.

    ``support`` in [0, 1] is how much of the question lessons explain here, the
    larger of two readings (see the module docstring): sharply, each taught concept
    of the question counts by how sharply its lessons point (an inverse document
    frequency among the memories they reach) times this memory's share of them;
    broadly, the part of the whole question's information this memory was taught.
    ``concentration`` in [0, 1] is how exclusively the lessons found point here:
    this memory's share of each concept's helpful outcomes, averaged over those
    concepts by their information.
    """

    seq: int
    support: float
    concentration: float
    lessons: tuple[Lesson, ...]

    sharpness: float = 0.0

    @property
    def confidence(self) -> float:
        """The weight of this memory's vote in fusion: the part of the question its
        lessons explain, times how exclusively they name it (see the module docstring).
        The sharp reading counts each concept by this memory's share already, so it
        is not scaled again: a memory rated right three times out of five keeps
        three fifths of its vote, not nine twenty-fifths."""
        return max(self.sharpness, self.support * self.concentration)


def feedback_delta(current: float, outcome: float) -> float:
    """What to add so a summed weight moves by ``outcome``, floored at 0."""
    visible = max(0.0, current)
    return max(0.0, visible + outcome) - current


@dataclass(frozen=True)
class Taught:
    """What one call taught: how many lessons moved, and each rated memory's share
    of each concept's helpful outcomes once the call is counted (see `teach`)."""

    lessons: int
    shares: dict[tuple[int, int], float]


def teach(
    store: LessonWrites,
    scope: Scope,
    classes: Mapping[int, str],
    concept_ids: Sequence[int],
    outcome: float,
) -> Taught:
    """Teach each rated memory (seq → access class) the concepts, moved by
    ``outcome`` (inside the caller's transaction).

    ``shares[(concept, seq)]`` is how sharply the concept points at the memory:
    after a helpful call, the memory's share of the concept's helpful outcomes
    (1 for a concept only ever asked with answers this memory gave, 1/40 for a
    filler asked with forty different answers); before a bad one, the share it
    held (1 where nothing was taught yet: nothing says the concept is a filler).

    A lesson lives in its memory's access class, so a role that may not read the
    memory never sees what it was taught. A helpful call adds its outcome once to
    each concept's count of helpful outcomes, however many memories it rated, in
    the least restricted class it rated: a reader of that class sees the whole
    call, and a reader of another class sees its own lessons whole.
    """
    if not classes or not concept_ids:
        return Taught(0, {})
    pairs = [(c, seq) for seq in sorted(classes) for c in concept_ids]
    current = store.lesson_weights(scope, pairs)
    before = store.lesson_taught(scope, concept_ids)
    lessons = [
        (classes[seq], c, seq, feedback_delta(current.get((c, seq), 0.0), outcome))
        for c, seq in pairs
    ]
    shares = {}
    for _, c, seq, delta in lessons:
        held = max(0.0, current.get((c, seq), 0.0))
        if outcome > 0:
            shares[(c, seq)] = (held + delta) / max(before.get(c, 0.0) + outcome, held + delta)
        else:
            shares[(c, seq)] = held / max(before.get(c, 0.0), held) if held > 0 else 1.0
    open_class = min(classes.values(), key=lambda key: (key.count("\n"), key))
    if outcome > 0:
        taught = [(open_class, c, outcome) for c in concept_ids]
    else:
        # A bad outcome takes back at most what it removed from a lesson, so that
        # unlearning a memory does not leave its concept counted as taught.
        removed: dict[int, float] = {}
        for _, c, _, delta in lessons:
            removed[c] = max(removed.get(c, 0.0), -delta)
        taught = [(open_class, c, -amount) for c, amount in removed.items() if amount > 0]
    store.add_lessons(scope, lessons, taught)
    return Taught(sum(1 for *_, delta in lessons if delta), shares)


def learned_hits(
    store: LessonReads, view: View, query_ids: Sequence[int], asked: int | None = None
) -> list[LearnedHit]:
    """Readable memories the query's concepts were taught to point at, as the `learned`
    arm ranks them in fusion: by the confidence of their votes, which scales each
    vote (ties: newest first).

    ``asked`` is how many distinct concepts the question carries, those the store
    has never seen included (``query_ids`` holds only the known ones); by default,
    as many as ``query_ids``.
    """
    if not query_ids:
        return []
    taught = store.concept_lessons(view.scope, query_ids, LESSONS_PER_CONCEPT)
    if not taught:
        return []
    # Each concept counts by its inverse document frequency among the memories the
    # question's lessons reach: one taught to a single memory is sharp, a filler
    # taught with every answer says nothing. A concept no lesson carries counts as
    # much as the sharpest taught one: nothing says it is a filler.
    pool = len({seq for lessons in taught.values() for seq, _ in lessons.strongest})
    info = {c: math.log1p(pool / lessons.spread) for c, lessons in taught.items()}
    untaught = max(len(set(query_ids)), asked or 0) - len(info)
    known = sum(info.values())
    whole = known + untaught * math.log1p(pool)
    by_memory: dict[int, list[Lesson]] = {}
    for concept, lessons in taught.items():
        heaviest = lessons.strongest[0][1]
        runner_up = lessons.strongest[1][1] if len(lessons.strongest) > 1 else 0.0
        for seq, weight in lessons.strongest:
            share = weight / max(lessons.taught, weight)
            leads = share > MAJORITY or weight == heaviest > runner_up
            by_memory.setdefault(seq, []).append(Lesson(concept, weight, share, leads))
    hits = []
    for seq, found in by_memory.items():
        sharpness = _sharpness(found, info, known)
        hits.append(
            LearnedHit(
                seq,
                max(sharpness, _coverage(found, info, whole)),
                _concentration(found, info),
                tuple(sorted(found, key=lambda lesson: (-lesson.weight, lesson.concept_id))),
                sharpness,
            )
        )
    readable = store.visible(view, [hit.seq for hit in hits]) if hits else set()
    hits = [hit for hit in hits if hit.seq in readable and hit.support > 0]
    hits.sort(key=lambda hit: (-hit.confidence, -hit.seq))
    return hits


def _concentration(found: Sequence[Lesson], info: Mapping[int, float]) -> float:
    """How exclusively the lessons found point at one memory, in [0, 1]: its share of
    each concept's helpful outcomes, weighted by the concept's information (a filler,
    which names every answer, barely counts either way)."""
    total = sum(info[lesson.concept_id] for lesson in found)
    return sum(info[lesson.concept_id] * lesson.share for lesson in found) / total


def _sharpness(found: Sequence[Lesson], info: Mapping[int, float], known: float) -> float:
    """How sharply the question's taught concepts point at one memory, in [0, 1]: each
    one's information times the memory's share of its helpful outcomes, over the
    information of every taught concept of the question (``known``). Zero unless,
    for some concept, the memory leads them (`MAJORITY`): two answers rated
    equally often in separate calls say nothing sharp."""
    if not any(lesson.leads for lesson in found):
        return 0.0
    return sum(info[lesson.concept_id] * lesson.share for lesson in found) / known


def _coverage(found: Sequence[Lesson], info: Mapping[int, float], whole: float) -> float:
    """The part of the whole question's information (``whole``, its untaught concepts
    included) that one memory was taught, in [0, 1]. Zero unless it was taught two
    concepts of the question or more: one concept asked with several answers says
    only that the memory was among them, which the sharp reading weighs."""
    if len(found) < 2:
        return 0.0
    return sum(info[lesson.concept_id] for lesson in found) / whole


def via(hit: LearnedHit, names: Mapping[int, str]) -> tuple[Via, ...]:
    """The `Via` records of a learned hit: each taught query concept, with the
    lesson's weight; the path is the concept itself (no link was walked)."""
    return tuple(
        Via(names[lesson.concept_id], lesson.weight, (names[lesson.concept_id],))
        for lesson in hit.lessons
    )
