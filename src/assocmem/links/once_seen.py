"""Pairs written together once and never rated: read from the memory that carries
them instead of stored (SQLite).

Most pairs of concepts are written together by one memory and never again, and no
outcome rates them. As `links` rows with two weight indexes they were most of a
store's disk, yet everything such a row says (count 1, weight 1, written when that
memory was) `memory_concepts` already holds. So a SQLite store keeps no row for
them, and reads them from there.

Invariant: a pair's state in a layer is its `links` row where it has one. Without
one, it is count 1 and weight 1 if a memory of the layer folded so far (seq at most
`FOLDED_SEQ` in store_info) carries both ends, with that memory's `created_at` as
its time; otherwise nothing. What `pending_links` holds is added to either, as
before. A fold stores a pair once its count passes 1 or feedback reaches it, and a
move, a forget and a merge keep the same rule, so no two memories folded so far
carry a pair that has no row. Memories after `FOLDED_SEQ` are still pending: their
counts are in `pending_links`, never read twice.

Common concepts bound the walks that tell a once-seen pair (`links_common`). A fold
marks a concept of its pairs once `COMMON` memories of a layer folded so far carry
it, with that folded seq (``since``). From then on, a fold gives every pair between
two marked concepts a row, once-seen or not. So a pair between two marked concepts
has no row only if the memories that carry it are at or before the later ``since``,
and the walk for it reads that far only, from the end marked later: in a store that
was marked as it grew, about `COMMON` memories, where the rarer end of two common
concepts may have thousands.

PostgreSQL counts every pair straight into `links` and keeps every row.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from assocmem.store.core import SQLStore
from assocmem.store.params import chunked, in_list

# store_info: the last memory seq whose co-occurrence the links fold has counted.
FOLDED_SEQ = "links_folded_seq"
# That seq, in SQL (NULL before the first fold: then nothing is once-seen).
FOLDED = f"(SELECT CAST(value AS INTEGER) FROM store_info WHERE key = '{FOLDED_SEQ}')"

# Memories of a concept counted to tell the rarer end of a pair, at most. Counting
# reads consecutive entries of one index range, far cheaper each than the random
# probes of a walk, so counting this far costs about what a short walk does; a lower
# cap leaves two ends past it looking alike, and a walk from the commoner one may
# probe every memory of a concept used throughout a large store.
COUNTED = 1024
# Pairs sharing an end at which that end's memories are walked once for all of them.
_WALKED_FOR = 4
# Folded memories of a layer carrying a concept at which a fold marks it common: a
# walk for a pair between two common concepts then reads about this many memories,
# where without the mark it reads the rarer end's memories, a number that grows with
# the store. The price is a row for each pair between common concepts written
# together only once; concepts this common mostly meet more than once, so their pair
# has a row anyway, and few rows are added.
COMMON = 64

# Whether a memory of the layer folded so far carries both ends of the pair.
_CARRIED = (
    "SELECT 1 FROM memory_concepts cy CROSS JOIN memory_concepts cx"
    " ON cx.scope_id = cy.scope_id AND cx.concept_id = {a} AND cx.memory_seq = cy.memory_seq"
    " WHERE cy.scope_id = {layer} AND cy.concept_id = {b} AND cy.memory_seq <= {folded}"
)
# The ends of a pair, lower id first, of the rows ``x`` and ``y`` of one memory.
_ORDERED = ("MIN(x.concept_id, y.concept_id)", "MAX(x.concept_id, y.concept_id)")
# Whether the pair has a row.
_STORED = "SELECT 1 FROM links cl WHERE cl.scope_id = {layer} AND cl.a = {a} AND cl.b = {b}"


def carried_sql(layer: str, a: str, b: str, folded: str, besides: str | None = None) -> str:
    """SQL true where a memory of ``layer`` folded so far (other than the seq
    ``besides``) carries both ``a`` and ``b`` (SQL expressions); it starts from ``b``'s
    memories (the higher id: usually the rarer concept, as ids are given in the order
    concepts are first written)."""
    other = f" AND cy.memory_seq <> {besides}" if besides is not None else ""
    return f"EXISTS ({_CARRIED.format(layer=layer, a=a, b=b, folded=folded)}{other})"


def rarer_carried_sql(layer: str, a: str, b: str, n_a: str, n_b: str, folded: str) -> str:
    """`carried_sql` walked from whichever end fewer memories carry: ``n_a`` and ``n_b``
    are their counts (`counted_sql`); on a tie, from ``b``."""
    return (
        f"CASE WHEN {n_a} < {n_b} THEN {carried_sql(layer, b, a, folded)}"
        f" ELSE {carried_sql(layer, a, b, folded)} END"
    )


def walk_sql(layer: str, a: str, b: str, ends: tuple[str, str, str, str], folded: str) -> str:
    """SQL true where a memory of ``layer`` folded so far carries both ``a`` and ``b``,
    for a pair with no row: ``ends`` are the two ends' counts (`counted_sql`) and
    marks (their ``since`` in `links_common`, NULL where unmarked). Between two marked
    concepts only the memories up to the later mark can carry it (module docstring):
    those are walked, from the end marked later. Where one end is marked, the other
    is walked: a fold marks every end of its pairs that `COMMON` memories carry, so
    the unmarked end is the rarer, and its count is never needed (a count may be a
    subquery a CASE evaluates only in the branches that read it). Otherwise
    `rarer_carried_sql`. Which end is walked changes only the cost, never the answer."""
    n_a, n_b, since_a, since_b = ends
    bound = f"MIN(MAX({since_a}, {since_b}), {folded})"
    return (
        f"CASE WHEN {since_a} IS NULL AND {since_b} IS NULL"
        f" THEN {rarer_carried_sql(layer, a, b, n_a, n_b, folded)}"
        f" WHEN {since_a} IS NULL THEN {carried_sql(layer, b, a, folded)}"
        f" WHEN {since_b} IS NULL THEN {carried_sql(layer, a, b, folded)}"
        f" WHEN {since_a} > {since_b} THEN {carried_sql(layer, b, a, bound)}"
        f" WHEN {since_b} > {since_a} THEN {carried_sql(layer, a, b, bound)}"
        f" ELSE {rarer_carried_sql(layer, a, b, n_a, n_b, bound)} END"
    )


def mark_sql(layer: str, concept: str) -> str:
    """SQL of the fold seq ``concept`` was marked common at in ``layer`` (NULL: not)."""
    return f"(SELECT since FROM links_common WHERE scope_id = {layer} AND concept_id = {concept})"


def stored_sql(layer: str, a: str, b: str) -> str:
    """SQL true where pair (``a``, ``b``) has a `links` row in ``layer``."""
    return f"EXISTS ({_STORED.format(layer=layer, a=a, b=b)})"


def counted_sql(layer: str, concept: str, folded: str) -> str:
    """SQL of how many memories of ``layer`` folded so far carry ``concept``, counted up
    to `COUNTED` (an index range cut by its LIMIT): enough to tell a pair's rarer end."""
    return (
        "(SELECT COUNT(*) FROM (SELECT 1 FROM memory_concepts WHERE scope_id = "
        f"{layer} AND concept_id = {concept} AND memory_seq <= {folded} LIMIT {COUNTED}))"
    )


def only_through(store: SQLStore, seq: int, layer: int) -> int:
    """How many pairs of memory ``seq`` (of ``layer``) are once-seen through it alone:
    no row, and no other memory of the layer folded so far carries them."""
    (n,) = store._query(
        "SELECT COUNT(*) FROM memory_concepts x JOIN memory_concepts y"
        " ON y.memory_seq = x.memory_seq AND y.concept_id > x.concept_id"
        " WHERE x.memory_seq = ? AND NOT "
        + stored_sql("?", "x.concept_id", "y.concept_id")
        + " AND NOT "
        + carried_sql("?", "x.concept_id", "y.concept_id", FOLDED, besides="?"),
        [seq, layer, layer, seq],
    )[0]
    return int(n)


def joining(store: SQLStore, seq: int, concepts: Sequence[int], layer: int) -> int:
    """How the once-seen pairs of ``layer`` change when folded memory ``seq`` carrying
    ``concepts`` joins it (its concept rows not yet there): +1 for each pair with no row
    nothing else carries, -1 for each pair with no row another memory carries (stored
    from now on), 0 for a pair `common_after` (stored from now on too)."""
    ids = json.dumps(sorted(set(concepts)))
    (n,) = store._query(
        "WITH v (layer, seq) AS (VALUES (?, ?)) SELECT COALESCE(SUM(CASE WHEN "
        + carried_sql("v.layer", "x.value", "y.value", FOLDED)
        + " THEN -1 WHEN "
        + common_after("v.layer", "x.value", "y.value", "v.seq")
        + " THEN 0 ELSE 1 END), 0) FROM v, json_each(?) x, json_each(?) y"
        " WHERE x.value < y.value AND NOT " + stored_sql("v.layer", "x.value", "y.value"),
        [layer, seq, ids, ids],
    )[0]
    return int(n)


def common_after(layer: str, a: str, b: str, seq: str) -> str:
    """SQL true where ``a`` and ``b`` are both marked common in ``layer`` and memory
    ``seq`` comes after the later mark: a pair it carries must have a row."""
    return f"{seq} > MAX({mark_sql(layer, a)}, {mark_sql(layer, b)})"


def count_change(store: SQLStore, changes: Mapping[int, int]) -> None:
    """Add ``{layer: change}`` to each layer's count of once-seen pairs."""
    store._conn.executemany(
        "INSERT INTO links_once_seen (scope_id, pairs) VALUES (?, ?) ON CONFLICT (scope_id)"
        " DO UPDATE SET pairs = links_once_seen.pairs + excluded.pairs",
        [(layer, n) for layer, n in sorted(changes.items()) if n],
    )


def side_partners(
    store: SQLStore, sides: Sequence[tuple[tuple[int, int, bool], int]], folded: int
) -> Iterator[tuple[int, int]]:
    """For each side ``((layer, concept, concept is the lower id), limit)``, the first
    ``limit`` other ends (ascending id) of the concept's once-seen pairs there, as
    ``(index of the side, other end)``: one statement for many sides, each driven by
    the concept's own memories and cut by its own LIMIT."""
    parts = []
    for (layer, concept, concept_is_a), limit in sides:
        beyond = ">" if concept_is_a else "<"
        parts.append((
            "SELECT {n}, other FROM (SELECT DISTINCT y.concept_id AS other"
            " FROM memory_concepts x CROSS JOIN memory_concepts y"
            " ON y.memory_seq = x.memory_seq AND y.scope_id = x.scope_id"
            " WHERE x.scope_id = ? AND x.concept_id = ? AND x.memory_seq <= ?"
            f" AND y.concept_id {beyond} ? AND NOT "
            + stored_sql("x.scope_id", *_ORDERED)
            + " ORDER BY other LIMIT ?) AS side{n}",
            [layer, concept, folded, concept, limit],
        ))  # fmt: skip
    return ((index, other) for index, (other,) in store._union(parts))


def pairs_seen_once(
    store: SQLStore, pairs: Sequence[tuple[int, int, int]], folded: int, *, times: bool = True
) -> dict[tuple[int, int, int], str | None]:
    """Which of ``pairs`` ``(layer, a, b)`` (``a < b``) are once-seen (no row, and a
    memory folded so far carries both), with that memory's `created_at` (None unless
    ``times``).

    Each pair is looked for from the end fewer memories carry: each of its memories
    is looked up at the other end. An end many asked pairs share (a read's question
    concept, say) has its memories walked once for all of them instead."""
    wanted = sorted(set(pairs))
    ends = Counter(end for layer, a, b in wanted for end in ((layer, a), (layer, b)))
    held = _carried_by(store, sorted(ends), folded)
    around: dict[tuple[int, int], list[int]] = {}
    for layer, a, b in wanted:
        # The rarer end; between ends as common, the one more pairs share, then the
        # higher id (ids are given in the order concepts are first written).
        rank_a = (-held[(layer, a)], ends[(layer, a)], a)
        rank_b = (-held[(layer, b)], ends[(layer, b)], b)
        center, other = (a, b) if rank_a > rank_b else (b, a)
        around.setdefault((layer, center), []).append(other)
    when, joined = (
        ("MIN(m.created_at)", " JOIN memories m ON m.seq = x.memory_seq") if times else ("NULL", "")
    )
    unstored = " AND NOT " + stored_sql("x.scope_id", *_ORDERED)
    parts: list[tuple[str, list[Any]]] = []
    layer_of: list[int] = []
    alone: dict[int, list[tuple[int, int]]] = {}
    for (layer, center), others in around.items():
        if len(others) < _WALKED_FOR:
            alone.setdefault(layer, []).extend((center, other) for other in others)
            continue
        for chunk in chunked(others):
            parts.append((
                f"SELECT {{n}}, x.concept_id, y.concept_id, {when} FROM memory_concepts x"
                " CROSS JOIN memory_concepts y"
                f" ON y.memory_seq = x.memory_seq AND y.scope_id = x.scope_id{joined}"
                " WHERE x.scope_id = ? AND x.concept_id = ? AND x.memory_seq <= ?"
                f" AND {in_list('y.concept_id', chunk)}{unstored} GROUP BY y.concept_id",
                [layer, center, folded, *chunk],
            ))  # fmt: skip
            layer_of.append(layer)
    for layer, few in alone.items():
        # Pairs looked for one by one, in one statement: each walks its rarer end's
        # memories and looks the other end up by key.
        parts.append((
            f"SELECT {{n}}, x.concept_id, y.concept_id, {when} FROM json_each(?) j"
            " CROSS JOIN memory_concepts x CROSS JOIN memory_concepts y"
            " ON y.scope_id = x.scope_id AND y.concept_id = j.value ->> 1"
            f" AND y.memory_seq = x.memory_seq{joined}"
            " WHERE x.scope_id = ? AND x.concept_id = j.value ->> 0 AND x.memory_seq <= ?"
            f"{unstored} GROUP BY j.key",
            [json.dumps(few), layer, folded],
        ))  # fmt: skip
        layer_of.append(layer)
    found: dict[tuple[int, int, int], str | None] = {}
    for index, (near, far, created) in store._union(parts):
        found[(layer_of[index], min(near, far), max(near, far))] = created
    return found


# A pair's ends as `walk_sql` reads them: counts as subqueries, evaluated only in the
# branches that read them, and the marks `_FOLDED_WEIGHTS` looked up.
_LAZY_ENDS = (
    counted_sql("q.layer", "q.a", "?"),
    counted_sql("q.layer", "q.b", "?"),
    "q.since_a",
    "q.since_b",
)
# `folded_weights` in one statement. Each pair is read on its own row, its ends'
# marks by key, and each end counted only where `walk_sql` reads the count: building
# shared tables of the pairs' ends (materialized, then searched through indexes made
# for the statement) cost more than the lookups they saved.
_FOLDED_WEIGHTS = (
    "WITH asked (k, layer, a, b, walk, weight, since_a, since_b) AS ("
    " SELECT j.key, j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, l.weight, "
    + mark_sql("(j.value ->> 0)", "(j.value ->> 1)")
    + ", "
    + mark_sql("(j.value ->> 0)", "(j.value ->> 2)")
    + " FROM json_each(?) j LEFT JOIN links l ON l.scope_id = j.value ->> 0"
    " AND l.a = j.value ->> 1 AND l.b = j.value ->> 2)"
    " SELECT k, COALESCE(weight, 1.0) FROM asked q WHERE weight IS NOT NULL OR (walk AND "
    + walk_sql("q.layer", "q.a", "q.b", _LAZY_ENDS, "?")
    + ")"
)


def folded_weights(
    store: SQLStore, pairs: Mapping[tuple[int, int, int], bool], folded: int
) -> dict[tuple[int, int, int], float]:
    """The folded weight of each pair ``(layer, a, b)`` (``a < b``) of ``pairs`` that
    has a row, and 1 for each once-seen one among those mapped to True (walked): the
    rest are left out. One statement: each pair is a key lookup, and a walked one
    without a row a walk of one end's memories looking the other end up by key
    (`walk_sql`)."""
    if not pairs:
        return {}
    asked = list(pairs)
    # The JSON of the pairs, then the folded seq wherever the statement reads it.
    ids = json.dumps([(*pair, int(pairs[pair])) for pair in asked])
    rows = store._query(_FOLDED_WEIGHTS, [ids, *[folded] * (_FOLDED_WEIGHTS.count("?") - 1)])
    return {asked[index]: float(weight) for index, weight in rows}


def _carried_by(
    store: SQLStore, ends: Sequence[tuple[int, int]], folded: int
) -> dict[tuple[int, int], int]:
    """How many memories folded so far carry each ``(layer, concept)``, counted up to
    `COUNTED`: one statement, each count an index range cut by its LIMIT."""
    (found,) = store._query(
        f"SELECT json_group_array({counted_sql('(j.value ->> 0)', '(j.value ->> 1)', '?')})"
        " FROM json_each(?) j",
        [folded, json.dumps(list(ends))],
    )[0]
    return dict(zip(ends, json.loads(found), strict=True))


def _seen_sql(where: str, partner: str) -> str:
    """A SELECT of ``(scope_id, a, b, at)``: each concept ``a`` of a memory folded so
    far that ``where`` admits (a condition on ``x``), each partner ``b`` that memory
    carries (``partner``: how its id compares with ``a``'s) where the pair has no row,
    and that memory's `created_at` ``at``. One bound parameter follows ``where``'s
    own: the folded seq."""
    return (
        "SELECT x.scope_id AS scope_id, x.concept_id AS a, y.concept_id AS b,"
        " MIN(m.created_at) AS at FROM memory_concepts x CROSS JOIN memory_concepts y"
        " ON y.memory_seq = x.memory_seq AND y.scope_id = x.scope_id"
        " JOIN memories m ON m.seq = x.memory_seq"
        f" WHERE {where} AND x.memory_seq <= ? AND y.concept_id {partner} x.concept_id"
        " AND NOT "
        + stored_sql("x.scope_id", *_ORDERED)
        + " GROUP BY x.scope_id, x.concept_id, y.concept_id"
    )


def pairs_around(
    store: SQLStore, layers: Sequence[int], concepts: Sequence[int], folded: int
) -> dict[tuple[int, int, int], str]:
    """Every once-seen pair of ``layers`` with an end in ``concepts``: ``{(layer, a, b):
    created_at of the memory that carries it}``."""
    found: dict[tuple[int, int, int], str] = {}
    for chunk in chunked(sorted(set(concepts))):
        where = f"{in_list('x.scope_id', layers)} AND {in_list('x.concept_id', chunk)}"
        for layer, concept, other, created in store._query(
            _seen_sql(where, "<>"), [*layers, *chunk, folded]
        ):
            found[(layer, min(concept, other), max(concept, other))] = created
    return found


def all_pairs_sql(where: str) -> str:
    """A SELECT of ``(scope_id, a, b, at)`` (``at``: the carrying memory's
    `created_at`) of every once-seen pair of the layers ``where`` (a condition on
    ``x.scope_id``) admits; one bound parameter follows its own: the folded seq."""
    return _seen_sql(where, ">")
