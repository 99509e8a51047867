"""SQL of the lessons outcomes taught, shared by both backends (and a whole store's
lessons out and back in).

A mixin of `SQLStore`, split off along the seam between counted co-occurrence
(`links`) and what feedback taught about which memory answers which concepts
(`lessons`, `lesson_concepts`). Invariants: every row is read only in the
reader's layers and summed over them; a lesson's summed weight never drops below
zero (feedback writes the correction that keeps it there).
"""

from __future__ import annotations

from collections.abc import Sequence

from assocmem.links.rows import LearnedLesson, TaughtConcept
from assocmem.store.connection import roles_of
from assocmem.store.core import SQLStore
from assocmem.store.params import KEYED, chunked, in_list, translated
from assocmem.store.parts import ByConcept, StorePart
from assocmem.store.protocol import ConceptLessons
from assocmem.text import times
from assocmem.types import Scope


class LessonQueries(SQLStore):
    """The lessons half of the SQL store: a part mixed into `SQLStore`."""

    def forget_lessons(self, seq: int, layer: int) -> None:
        """A forget's hook: what outcomes taught about a memory points at nothing once
        it is gone."""
        self._conn.execute("DELETE FROM lessons WHERE memory_seq = ?", [seq])

    def drop_uncarried_lessons(self, layers: Sequence[int], gone: Sequence[int]) -> None:
        """A forget's hook: no lesson survives of a concept no memory of the agent (in
        ``layers``) carries any more."""
        for concept in gone:
            for table in ("lessons", "lesson_concepts"):
                self._conn.execute(
                    f"DELETE FROM {table} WHERE {in_list('scope_id', layers)} AND concept_id = ?",
                    [*layers, concept],
                )

    @translated
    def lesson_weights(
        self, scope: Scope, pairs: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], float]:
        layers = self._layers(scope)
        wanted = sorted(set(pairs))
        if not layers or not wanted:
            return {}
        found: dict[tuple[int, int], float] = {}
        for chunk in chunked(wanted):
            concepts = sorted({c for c, _ in chunk})
            seqs = sorted({s for _, s in chunk})
            for concept, seq, weight in self._query(
                "SELECT concept_id, memory_seq, SUM(weight) FROM lessons"
                f" WHERE {in_list('scope_id', layers)} AND {in_list('concept_id', concepts)}"
                f" AND {in_list('memory_seq', seqs)} GROUP BY concept_id, memory_seq",
                [*layers, *concepts, *seqs],
            ):
                found[(concept, seq)] = float(weight)
        return {pair: found[pair] for pair in wanted if pair in found}

    @translated
    def add_lessons(
        self,
        scope: Scope,
        lessons: Sequence[tuple[str, int, int, float]],
        taught: Sequence[tuple[str, int, float]],
    ) -> None:
        at = times.to_micros(times.now())
        with self.transaction():
            keys = {key for key, *_ in lessons} | {key for key, *_ in taught}
            layers = {key: self._own_layer(scope, roles_of(key)) for key in sorted(keys)}
            lessons = [row for row in lessons if row[3] != 0.0]  # nothing to take back
            self._conn.executemany(
                "INSERT INTO lessons (scope_id, concept_id, memory_seq, weight, outcomes,"
                " updated_at) VALUES (?,?,?,?,1,?) ON CONFLICT (scope_id, concept_id, memory_seq)"
                " DO UPDATE SET weight = lessons.weight + excluded.weight,"
                " outcomes = lessons.outcomes + 1, updated_at = excluded.updated_at",
                sorted((layers[key], c, seq, delta, at) for key, c, seq, delta in lessons),
            )
            self._conn.executemany(
                "INSERT INTO lesson_concepts (scope_id, concept_id, taught) VALUES (?,?,?)"
                " ON CONFLICT (scope_id, concept_id)"
                " DO UPDATE SET taught = lesson_concepts.taught + excluded.taught",
                sorted((layers[key], c, amount) for key, c, amount in taught),
            )

    @translated
    def lesson_taught(self, scope: Scope, concept_ids: Sequence[int]) -> dict[int, float]:
        layers = self._layers(scope)
        if not layers or not concept_ids or self._empty("lesson_concepts"):
            return {}
        return {
            int(c): float(t)
            for c, t in self._query(
                KEYED + "SELECT concept_id, SUM(taught) FROM lesson_concepts"
                f" WHERE {in_list('scope_id', layers)}"
                f" AND {in_list('concept_id', list(concept_ids))} GROUP BY concept_id",
                [*layers, *concept_ids],
            )
        }

    @translated
    def taught_concepts(self, scope: Scope) -> dict[int, str]:
        """Every concept with helpful outcomes in the reader's layers, by id, with its
        name: the words lessons were taught (remembered for the read snapshot)."""
        layers = self._layers(scope)
        if not layers or self._empty("lesson_concepts"):
            return {}
        rows = self._remembered(
            ("taught concepts", tuple(layers)),
            lambda: self._query(
                "SELECT t.concept_id, c.name FROM (SELECT concept_id FROM lesson_concepts"
                f" WHERE {in_list('scope_id', layers)} GROUP BY concept_id"
                " HAVING SUM(taught) > 0) AS t JOIN concepts c ON c.id = t.concept_id",
                layers,
            ),
        )
        return {int(c): str(name) for c, name in rows}

    @translated
    def concept_lessons(
        self, scope: Scope, concept_ids: Sequence[int], limit: int
    ) -> dict[int, ConceptLessons]:
        layers = self._layers(scope)
        if not layers or not concept_ids:
            return {}
        # Remembered per concept for the read snapshot: the learned arm and the arm
        # by meaning read many of the same concepts, and so do reads in a row.
        found: dict[int, ConceptLessons] = self._per_seq(
            ("concept lessons", tuple(layers), limit),
            concept_ids,
            lambda wanted: self._concept_lessons(scope, layers, wanted, limit),
        )
        return found

    def _concept_lessons(
        self, scope: Scope, layers: Sequence[int], concept_ids: Sequence[int], limit: int
    ) -> dict[int, ConceptLessons]:
        found: dict[int, ConceptLessons] = {}
        with self.snapshot():
            taught = self.lesson_taught(scope, concept_ids)
            if not taught:
                return found  # nothing was taught with these concepts: no lesson to read
            # Each concept's heaviest lessons and how many memories its lessons point
            # at (counted over every group, before the LIMIT cuts them), one part each.
            parts = [
                (
                    "SELECT {n}, memory_seq, w, spread FROM (SELECT memory_seq,"
                    " SUM(weight) AS w, COUNT(*) OVER () AS spread FROM lessons"
                    f" WHERE {in_list('scope_id', layers)} AND concept_id = ?"
                    " GROUP BY memory_seq HAVING SUM(weight) > 0"
                    " ORDER BY w DESC, memory_seq DESC LIMIT ?) AS heaviest{n}",
                    [*layers, concept, limit],
                )
                for concept in concept_ids
            ]
            strongest: dict[int, list[tuple[int, float]]] = {}
            spread: dict[int, int] = {}
            for index, (seq, weight, groups) in self._union(parts):
                strongest.setdefault(concept_ids[index], []).append((int(seq), float(weight)))
                spread[concept_ids[index]] = int(groups)
            for concept in concept_ids:
                if concept in strongest:
                    heaviest = sorted(strongest[concept], key=lambda row: (-row[1], -row[0]))
                    found[concept] = ConceptLessons(
                        taught=float(taught.get(concept, 0.0)),
                        spread=spread[concept],
                        strongest=tuple(heaviest),
                    )
        return found

    @translated
    def carried(self, scope: Scope, concept_ids: Sequence[int]) -> set[int]:
        layers = self._layers(scope)
        if not layers:
            return set()
        parts = [
            (
                "SELECT {n} FROM (SELECT 1 FROM memory_concepts"
                f" WHERE {in_list('scope_id', layers)} AND concept_id = ? LIMIT 1) AS held{{n}}",
                [*layers, concept],
            )
            for concept in concept_ids
        ]
        return {concept_ids[index] for index, _ in self._union(parts)}

    # -- portable: a whole store's lessons out and back in

    @translated
    def learned_lessons(self, scope: Scope) -> tuple[list[LearnedLesson], list[TaughtConcept]]:
        layers = self._layers(scope)
        if not layers:
            return [], []
        where = in_list("l.scope_id", layers)
        with self.snapshot():
            lessons = self._query(
                "SELECT s.access, c.name, m.id, SUM(l.weight), SUM(l.outcomes),"
                " MAX(l.updated_at) FROM lessons l JOIN scopes s ON s.id = l.scope_id"
                " JOIN concepts c ON c.id = l.concept_id JOIN memories m ON m.seq = l.memory_seq"
                f" WHERE {where} GROUP BY s.access, c.name, m.id, m.seq"
                " ORDER BY s.access, m.seq, c.name",
                layers,
            )
            taught = self._query(
                "SELECT s.access, c.name, SUM(l.taught) FROM lesson_concepts l"
                " JOIN scopes s ON s.id = l.scope_id JOIN concepts c ON c.id = l.concept_id"
                f" WHERE {where} GROUP BY s.access, c.name ORDER BY s.access, c.name",
                layers,
            )
        return (
            [
                LearnedLesson(tuple(roles_of(a)), c, m, float(w), int(n), times.from_micros(u))
                for a, c, m, w, n, u in lessons
            ],
            [TaughtConcept(tuple(roles_of(a)), c, float(t)) for a, c, t in taught],
        )

    @translated
    def restore_lessons(
        self, scope: Scope, lessons: Sequence[LearnedLesson], taught: Sequence[TaughtConcept]
    ) -> list[bool]:
        """Whether each lesson was restored (False: its memory is not readable here)."""
        with self.transaction():
            names = [x.concept for x in lessons] + [t.concept for t in taught]
            ids = self.intern_concepts(names)
            seqs = self.own_seqs(scope, [lesson.memory_id for lesson in lessons])
            kept = [lesson for lesson in lessons if lesson.memory_id in seqs]
            self._conn.executemany(
                "INSERT INTO lessons (scope_id, concept_id, memory_seq, weight, outcomes,"
                " updated_at) VALUES (?,?,?,?,?,?) ON CONFLICT (scope_id, concept_id, memory_seq)"
                " DO UPDATE SET weight = excluded.weight, outcomes = excluded.outcomes,"
                " updated_at = excluded.updated_at",
                [
                    (
                        self._own_layer(scope, x.access),
                        ids[x.concept],
                        seqs[x.memory_id],
                        x.weight,
                        x.outcomes,
                        times.to_micros(x.updated_at),
                    )  # fmt: skip
                    for x in kept
                ],
            )
            self._conn.executemany(
                "INSERT INTO lesson_concepts (scope_id, concept_id, taught) VALUES (?,?,?)"
                " ON CONFLICT (scope_id, concept_id) DO UPDATE SET taught = excluded.taught",
                [(self._own_layer(scope, t.access), ids[t.concept], t.taught) for t in taught],
            )
        return [lesson.memory_id in seqs for lesson in lessons]

    part = StorePart(
        "lessons",
        empty_checked=("lesson_concepts",),
        forget_tables=("lessons", "lesson_concepts"),
        on_forget=forget_lessons,
        after_forget=drop_uncarried_lessons,
        concept_refs=(("lessons", "concept_id"), ("lesson_concepts", "concept_id")),
        by_concept={
            "lessons": ByConcept(
                key=("memory_seq",), summed=("weight", "outcomes"), latest=("updated_at",)
            ),
            "lesson_concepts": ByConcept(summed=("taught",)),
        },
    )
