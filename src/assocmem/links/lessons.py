"""Lessons: what outcomes taught about which memory answers which concepts.

A helpful rating of a memory for a question teaches that memory the question's
concepts (query-log document expansion): a later question carrying them finds
the memory even when its text shares no word with them. Lessons are kept apart
from co-occurrence, so their weight means only "an outcome said so".

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

from assocmem.store import Store, View
from assocmem.types import Scope, Via

# Lessons read per concept, heaviest first: a concept whose lessons point at more
# memories than this is spread too thin to lift any one of them.
LESSONS_PER_CONCEPT = 64
# A memory is recalled by its lessons only when, for some concept of the question,
# most of the helpful outcomes that carried that concept rated it: when the concept
# was asked about, this memory helped more often than not. The same majority
# splits lessons that explain most of a question (they vote) from lessons that
# only corroborate what the question found.
MAJORITY = 0.5


@dataclass(frozen=True)
class Lesson:
    """One concept a memory was taught: its weight and its share of that concept's
    helpful outcomes."""

    concept_id: int
    weight: float
    share: float


@dataclass(frozen=True)
class LearnedHit:
    """A memory the question's concepts were taught to point at.

    ``support`` in [0, 1] is how much of what lessons know of the question points
    here: each taught concept of the question counts by how sharply its lessons
    point (an inverse document frequency among the memories they reach), times this
    memory's share of them.
    """

    seq: int
    support: float
    lessons: tuple[Lesson, ...]


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
    store: Store,
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


def learned_hits(store: Store, view: View, query_ids: Sequence[int]) -> list[LearnedHit]:
    """Readable memories the query's concepts were taught to point at, best supported
    first (ties: newest first)."""
    if not query_ids:
        return []
    taught = store.concept_lessons(view.scope, query_ids, LESSONS_PER_CONCEPT)
    if not taught:
        return []
    # Each taught concept counts by its inverse document frequency among the memories
    # these concepts' lessons reach: one taught to a single memory is sharp, a filler
    # taught with every answer says nothing. The question's untaught concepts are
    # left to the arms that read its words and meaning; lessons speak for the rest.
    pool = len({seq for lessons in taught.values() for seq, _ in lessons.strongest})
    info = {c: math.log1p(pool / lessons.spread) for c, lessons in taught.items()}
    total = sum(info.values())
    by_memory: dict[int, list[Lesson]] = {}
    for concept, lessons in taught.items():
        for seq, weight in lessons.strongest:
            share = weight / max(lessons.taught, weight)
            by_memory.setdefault(seq, []).append(Lesson(concept, weight, share))
    hits = [
        LearnedHit(
            seq,
            sum(info[lesson.concept_id] * lesson.share for lesson in found) / total,
            tuple(sorted(found, key=lambda lesson: (-lesson.weight, lesson.concept_id))),
        )
        for seq, found in by_memory.items()
        if max(lesson.share for lesson in found) > MAJORITY
    ]
    readable = store.visible(view, [hit.seq for hit in hits]) if hits else set()
    hits = [hit for hit in hits if hit.seq in readable]
    hits.sort(key=lambda hit: (-hit.support, -hit.seq))
    return hits


def voting(hits: Sequence[LearnedHit]) -> list[LearnedHit]:
    """The hits whose lessons explain most of the question: they vote in fusion (the
    `learned` arm) and may bring back a memory no other arm found."""
    return [hit for hit in hits if hit.support > MAJORITY]


def corroborating(hits: Sequence[LearnedHit]) -> dict[int, float]:
    """``{seq: support}`` of the hits whose lessons explain half the question or less.
    They only corroborate what the question's own arms found, as a bounded fold
    after fusion: alone they would push in whatever a shared word was once taught
    to (see `fusion.lesson_factor`)."""
    return {hit.seq: hit.support for hit in hits if hit.support <= MAJORITY}


def via(hit: LearnedHit, names: Mapping[int, str]) -> tuple[Via, ...]:
    """The `Via` records of a learned hit: each taught query concept, with the
    lesson's weight; the path is the concept itself (no link was walked)."""
    return tuple(
        Via(names[lesson.concept_id], lesson.weight, (names[lesson.concept_id],))
        for lesson in hit.lessons
    )
