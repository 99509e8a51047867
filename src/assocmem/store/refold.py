"""Refolding: a store's concept names kept to the folding this assocmem makes.

Invariant: the `store_info` row `concept_fold` names the folding
(`concepts.FOLDING`) every concept name in the store was made with, so a concept
written before an upgrade and one read after it meet. A store without the row,
or with another folding, is refolded once when it opens, in one write
transaction: each concept is renamed to the current fold of the spelling its
memories carry most (of its old name when none carries it), and concepts that
come to share a name are merged into the lowest id, their memory rows, links and
lessons summed, so nothing a write or feedback taught is lost; a memory that
carried two merged spellings counts each of its pairs once, as a write does. The SQL is shared
by both backends; a schema migration cannot do this, as it needs the stemmer.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable
from itertools import combinations
from typing import TYPE_CHECKING

from assocmem.text.concepts import FOLDING, normalize_concept

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from assocmem.store.core import SQLStore

FOLD_KEY = "concept_fold"

# A name no concept can have (normalised names never start with a space), held by a
# concept between its old name and its new one, so no rename meets a UNIQUE clash.
_PARKED = "' refold ' || CAST(id AS TEXT)"

# Tables keyed by (scope_id, concept_id, ...) besides memory_concepts, merged the same
# way: the key's other columns, the summed ones, the latest-wins ones.
Columns = tuple[str, ...]
_BY_CONCEPT: dict[str, tuple[Columns, Columns, Columns]] = {
    "lessons": (("memory_seq",), ("weight", "outcomes"), ("updated_at",)),
    "lesson_concepts": ((), ("taught",), ()),
}


def refold_once(store: SQLStore) -> bool:
    """Refold ``store`` unless it already has this folding (one lookup); whether it did.

    Call on open, after the schema migrations, under the lock that serialises them.
    """
    if is_current(store):
        return False
    with store.transaction():
        if is_current(store):  # refolded by another process while this one waited
            return False
        _refold(store)
        store._conn.execute(
            "INSERT INTO store_info (key, value) VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [FOLD_KEY, FOLDING],
        )
    store._drop_concept_caches()
    log.info("store refolded its concepts to folding %s", FOLDING)
    return True


def is_current(store: SQLStore) -> bool:
    """Whether the store's concept names were made with this assocmem's folding."""
    rows = store._query("SELECT value FROM store_info WHERE key = ?", [FOLD_KEY])
    return bool(rows) and rows[0][0] == FOLDING


def _refold(store: SQLStore) -> None:
    names = dict(store._query("SELECT id, name FROM concepts"))
    forms = store._query(
        "SELECT concept_id, form, COUNT(*) FROM memory_concepts GROUP BY concept_id, form"
    )
    merged, renamed = plan(names, forms)
    if merged:
        _merge(store, merged)
    if renamed:
        _rename(store, renamed)


def _merge(store: SQLStore, merged: dict[int, int]) -> None:
    conn = store._conn
    conn.execute("CREATE TEMPORARY TABLE refold_map (old_id BIGINT PRIMARY KEY, new_id BIGINT)")
    conn.executemany("INSERT INTO refold_map (old_id, new_id) VALUES (?, ?)", list(merged.items()))
    store._fold_links()  # every pending count in `links`, where the re-keying sees it
    overcounts = _overcounts(store, merged)
    _merge_memory_concepts(store)
    _merge_links(store)
    _uncount(store, overcounts)
    for table, columns in _BY_CONCEPT.items():
        _merge_by_concept(store, table, *columns)
    conn.execute("DELETE FROM concepts WHERE id IN (SELECT old_id FROM refold_map)")
    conn.execute("DROP TABLE refold_map")


def plan(
    names: dict[int, str], forms: Iterable[tuple[int, str, int]]
) -> tuple[dict[int, int], dict[int, str]]:
    """The refold of concepts ``names`` (id → name) whose memories carry ``forms``
    (id, original spelling, memories): which ids merge into which (old → lowest id
    of the same new name), and which kept ids take a new name."""
    best: dict[int, tuple[int, str]] = {}
    for concept, form, count in forms:
        key = (-int(count), str(form))  # most memories first, then the smallest spelling
        if concept not in best or key < best[concept]:
            best[concept] = key
    by_name: dict[str, list[int]] = defaultdict(list)
    for concept, name in names.items():
        spelling = best[concept][1] if concept in best else name
        by_name[normalize_concept(spelling) or name].append(concept)
    merged: dict[int, int] = {}
    renamed: dict[int, str] = {}
    for name, ids in by_name.items():
        keep = min(ids)
        merged.update((other, keep) for other in ids if other != keep)
        if names[keep] != name:
            renamed[keep] = name
    return merged, renamed


def _merge_memory_concepts(store: SQLStore) -> None:
    # A memory that carried two of the merged concepts keeps one row: the one it
    # listed first (lower position), with that row's spelling.
    store._conn.execute(
        "INSERT INTO memory_concepts (scope_id, concept_id, memory_seq, position, form)"
        " SELECT scope_id, concept_id, memory_seq, position, form FROM ("
        "  SELECT mc.scope_id, m.new_id AS concept_id, mc.memory_seq, mc.position, mc.form,"
        "   ROW_NUMBER() OVER (PARTITION BY mc.scope_id, m.new_id, mc.memory_seq"
        "    ORDER BY mc.position, mc.form) AS nth"
        "  FROM memory_concepts mc JOIN refold_map m ON m.old_id = mc.concept_id"
        " ) moved WHERE nth = 1"
        " ON CONFLICT (scope_id, concept_id, memory_seq) DO UPDATE"
        " SET position = excluded.position, form = excluded.form"
        " WHERE excluded.position < memory_concepts.position"
    )
    store._conn.execute(
        "DELETE FROM memory_concepts WHERE concept_id IN (SELECT old_id FROM refold_map)"
    )


def _overcounts(store: SQLStore, merged: dict[int, int]) -> Counter[tuple[int, int, int]]:
    """Co-occurrence that summing would count more than once: a memory that carried
    two spellings now merged (seeing, see) wrote a pair with each, so after the merge
    it would hold n_a × n_b counts of a pair it carries once. ``(layer, a, b)`` → extra."""
    carried: dict[tuple[int, int], list[int]] = defaultdict(list)
    for layer, seq, concept in store._query(
        "SELECT scope_id, memory_seq, concept_id FROM memory_concepts WHERE memory_seq IN"
        " (SELECT memory_seq FROM memory_concepts"
        "  WHERE concept_id IN (SELECT old_id FROM refold_map))"
    ):
        carried[(layer, seq)].append(merged.get(concept, concept))
    extra: Counter[tuple[int, int, int]] = Counter()
    for (layer, _), concepts in carried.items():
        times = Counter(concepts)
        if max(times.values()) > 1:
            for a, b in combinations(sorted(times), 2):
                extra[(layer, a, b)] += times[a] * times[b] - 1
    return extra


def _uncount(store: SQLStore, extra: Counter[tuple[int, int, int]]) -> None:
    """Take the counts `_overcounts` found back from the merged links, so each memory
    counts each pair once, as a write of it today would (and `forget` takes back)."""
    store._conn.executemany(
        "UPDATE links SET count = count - ?, weight = weight - ? WHERE scope_id = ?"
        " AND a = ? AND b = ?",
        [(n, n, layer, a, b) for (layer, a, b), n in sorted(extra.items()) if n],
    )


def _merge_links(store: SQLStore) -> None:
    # Each pair touching a merged concept is re-keyed to its new ends, kept a < b, and
    # summed into the pair already there; a pair whose two ends merged is dropped. New
    # keys hold only surviving ids, so no re-keyed row lands on a row still to move.
    store._conn.execute(
        "INSERT INTO links (scope_id, a, b, weight, count, outcome_sum, feedback_count,"
        " updated_at)"
        " SELECT scope_id, lo, hi, SUM(weight), SUM(count), SUM(outcome_sum),"
        "  SUM(feedback_count), MAX(updated_at) FROM ("
        "  SELECT scope_id, CASE WHEN na < nb THEN na ELSE nb END AS lo,"
        "   CASE WHEN na < nb THEN nb ELSE na END AS hi,"
        "   weight, count, outcome_sum, feedback_count, updated_at FROM ("
        "   SELECT l.*, COALESCE(ma.new_id, l.a) AS na, COALESCE(mb.new_id, l.b) AS nb"
        "   FROM links l LEFT JOIN refold_map ma ON ma.old_id = l.a"
        "   LEFT JOIN refold_map mb ON mb.old_id = l.b"
        "   WHERE ma.old_id IS NOT NULL OR mb.old_id IS NOT NULL"
        "  ) ends"
        " ) moved WHERE lo <> hi GROUP BY scope_id, lo, hi"
        " ON CONFLICT (scope_id, a, b) DO UPDATE SET weight = links.weight + excluded.weight,"
        " count = links.count + excluded.count,"
        " outcome_sum = links.outcome_sum + excluded.outcome_sum,"
        " feedback_count = links.feedback_count + excluded.feedback_count,"
        f" updated_at = {_later('links')}"
    )
    store._conn.execute(
        "DELETE FROM links WHERE a IN (SELECT old_id FROM refold_map)"
        " OR b IN (SELECT old_id FROM refold_map)"
    )


def _merge_by_concept(
    store: SQLStore, table: str, keys: Columns, sums: Columns, latest: Columns
) -> None:
    """Merge a table keyed by (scope_id, concept_id, *keys*): rows that meet sum
    ``sums`` and keep the latest ``latest`` (columns from `_BY_CONCEPT`)."""
    key = ", ".join(["scope_id", "concept_id", *keys])
    group = ", ".join(["t.scope_id", "m.new_id", *(f"t.{c}" for c in keys)])
    picked = ", ".join([group, *(f"SUM(t.{c})" for c in sums), *(f"MAX(t.{c})" for c in latest)])
    updates = ", ".join(
        [f"{c} = {table}.{c} + excluded.{c}" for c in sums]
        + [f"{c} = {_later(table, c)}" for c in latest]
    )
    store._conn.execute(
        f"INSERT INTO {table} ({', '.join([key, *sums, *latest])}) SELECT {picked}"
        f" FROM {table} t JOIN refold_map m ON m.old_id = t.concept_id WHERE true"
        f" GROUP BY {group} ON CONFLICT ({key}) DO UPDATE SET {updates}"
    )
    store._conn.execute(f"DELETE FROM {table} WHERE concept_id IN (SELECT old_id FROM refold_map)")


def _later(table: str, column: str = "updated_at") -> str:
    """The later of a row's ``column`` and the incoming one: SQLite spells it
    MAX(x, y), PostgreSQL GREATEST(x, y), and both read CASE."""
    return (
        f"CASE WHEN excluded.{column} > {table}.{column}"
        f" THEN excluded.{column} ELSE {table}.{column} END"
    )


def _rename(store: SQLStore, renamed: dict[int, str]) -> None:
    conn = store._conn
    conn.execute("CREATE TEMPORARY TABLE refold_names (id BIGINT PRIMARY KEY, name TEXT)")
    conn.executemany("INSERT INTO refold_names (id, name) VALUES (?, ?)", list(renamed.items()))
    # Two passes: a concept may take the name another one is giving up in the same refold.
    conn.execute(f"UPDATE concepts SET name = {_PARKED} WHERE id IN (SELECT id FROM refold_names)")
    conn.execute(
        "UPDATE concepts SET name = (SELECT r.name FROM refold_names r WHERE r.id = concepts.id)"
        " WHERE id IN (SELECT id FROM refold_names)"
    )
    conn.execute("DROP TABLE refold_names")
