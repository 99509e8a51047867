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
from typing import TYPE_CHECKING

from assocmem.store.parts import ByConcept, by_concept
from assocmem.store.rows import SAME_AS_NAME, read_form
from assocmem.text.concepts import FOLDING, normalize_concept

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from assocmem.store.core import SQLStore

FOLD_KEY = "concept_fold"

# A name no concept can have (normalised names never start with a space), held by a
# concept between its old name and its new one, so no rename meets a UNIQUE clash.
_PARKED = "' refold ' || CAST(id AS TEXT)"


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
    stored = store._query(
        "SELECT concept_id, form, COUNT(*) FROM memory_concepts GROUP BY concept_id, form"
    )
    spelled: Counter[tuple[int, str]] = Counter()
    for concept, form, count in stored:
        spelled[concept, read_form(names[concept], form)] += int(count)
    merged, renamed = plan(names, [(c, form, n) for (c, form), n in spelled.items()])
    # A row that spells its concept as the name says so by holding none: the
    # spelling is written out before the concept leaves that name.
    store._execute_in(
        "UPDATE memory_concepts SET form = (SELECT c.name FROM concepts c"
        " WHERE c.id = memory_concepts.concept_id) WHERE form = ? AND concept_id IN (?*)",
        sorted({*merged, *renamed}),
        before=[SAME_AS_NAME],
    )
    if merged:
        _merge(store, merged)
    if renamed:
        _rename(store, renamed)


def _merge(store: SQLStore, merged: dict[int, int]) -> None:
    conn = store._conn
    conn.execute("CREATE TEMPORARY TABLE refold_map (old_id BIGINT PRIMARY KEY, new_id BIGINT)")
    conn.executemany("INSERT INTO refold_map (old_id, new_id) VALUES (?, ?)", list(merged.items()))
    store.settle()  # every buffered row in its table, where the re-keying sees it
    for on_merge in store.hooks("on_merge"):
        on_merge(store, merged)  # before the memories' concept rows are re-keyed
    _merge_memory_concepts(store)
    for table, how in by_concept(store.parts()).items():
        _merge_by_concept(store, table, how)
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


def _merge_by_concept(store: SQLStore, table: str, how: ByConcept) -> None:
    """Merge a table keyed by (scope_id, concept, *key*): rows that meet sum
    ``summed`` and keep the latest ``latest`` (a part's `ByConcept`)."""
    keys, sums, latest = how.key, how.summed, how.latest
    key = ", ".join(["scope_id", how.concept, *keys])
    group = ", ".join(["t.scope_id", "m.new_id", *(f"t.{c}" for c in keys)])
    picked = ", ".join([group, *(f"SUM(t.{c})" for c in sums), *(f"MAX(t.{c})" for c in latest)])
    updates = ", ".join(
        [f"{c} = {table}.{c} + excluded.{c}" for c in sums]
        + [f"{c} = {later(table, c)}" for c in latest]
    )
    store._conn.execute(
        f"INSERT INTO {table} ({', '.join([key, *sums, *latest])}) SELECT {picked}"
        f" FROM {table} t JOIN refold_map m ON m.old_id = t.{how.concept} WHERE true"
        f" GROUP BY {group} ON CONFLICT ({key}) DO UPDATE SET {updates}"
    )
    store._conn.execute(
        f"DELETE FROM {table} WHERE {how.concept} IN (SELECT old_id FROM refold_map)"
    )


def later(table: str, column: str = "updated_at") -> str:
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
