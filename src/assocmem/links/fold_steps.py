"""The steps of a fold of pending link counts into `links` (SQLite), on any
connection to the store, and the worker process that runs them beside a writer.

A fold is planned in a read snapshot and then applied. Planning groups the pending
pairs, weighs each against its `links` row or the memory that carries it once
(`once_seen`) and notes the ends newly common, all into the connection's temporary
tables: it is most of a fold's work and writes nothing of the store's own, so it
takes no write lock. Applying writes the rows, drops the pending rows the plan
counted (ids up to its last) and records what is folded, in a write transaction.

A writer runs both steps in its own transaction when it must settle, or when no
worker can help; otherwise a worker process plans while the writer goes on, and
applies when the writer hands it the write lock (`folding.FoldWorker`). A plan is
as of its snapshot. What commits after it only appends pending rows (ids past the
plan's last) and memories (seqs past its last), which a fold in that snapshot
leaves pending, so the plan still holds for them. Whatever else changes what a
plan read (a forget, a move, a refold, a restore, another fold) folds first, so it
deletes pending rows the plan counted or moves the fold marks in `store_info`: a
plan that no longer `holds` is dropped, and what it counted waits for the next
fold. Applying a plan leaves the store as a fold in its snapshot would have, with
every later append still pending.

The statements come from the writer (`folding.recipe`); this module imports
nothing of assocmem, so that the worker starts as a bare interpreter running this
file.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

# A plan: the first and last pending row it counts, the fold marks it read in
# store_info (the last id at the fold before, the last memory seq folded then) and
# the last memory seq of its snapshot (folded once it is applied).
Plan = tuple[int, int, int, int, int]
Recipe = Mapping[str, Any]


def plan(conn: sqlite3.Connection, recipe: Recipe) -> Plan | None:
    """Plan a fold of everything pending as ``conn``'s open transaction sees it (None:
    nothing is pending), into ``conn``'s temporary tables."""
    first, last, _, base, folded = conn.execute(recipe["span"]).fetchone()
    if not last:
        return None
    (feedback,) = conn.execute(recipe["feedback"]).fetchone()
    for table in recipe["tables"]:
        conn.execute(table)
    discard(conn, recipe)  # left empty by the last fold, unless it stopped halfway
    for sql, params in recipe["plan"]:
        conn.execute(sql, params)
    conn.execute(recipe["pairs_feedback" if feedback else "pairs_counts"])
    (seq,) = conn.execute(recipe["seq"]).fetchone()
    return int(first), int(last), int(base or 0), int(folded or 0), int(seq)


def holds(conn: sqlite3.Connection, recipe: Recipe, planned: Sequence[int]) -> bool:
    """Whether ``planned`` still holds in ``conn``'s write transaction: no fold, and
    nothing that folds first, ran since its snapshot."""
    first, _, _, base, folded = conn.execute(recipe["span"]).fetchone()
    planned_first, _, planned_base, planned_folded, _ = planned
    return (first, int(base or 0), int(folded or 0)) == (
        planned_first,
        planned_base,
        planned_folded,
    )


def apply(conn: sqlite3.Connection, recipe: Recipe, planned: Sequence[int]) -> None:
    """Write ``planned``, made on ``conn``, inside ``conn``'s write transaction."""
    for sql in recipe["apply"]:
        conn.execute(sql)
    discard(conn, recipe)
    _, last, _, _, seq = planned
    conn.execute(recipe["delete"], [last])
    conn.execute(recipe["done"], [last, seq])


def discard(conn: sqlite3.Connection, recipe: Recipe) -> None:
    """Empty ``conn``'s plan tables."""
    for sql in recipe["discard"]:
        conn.execute(sql)


def serve(commands: TextIO, replies: TextIO) -> None:
    """The worker: its first line is the store's path, its connection settings and the
    recipe; then each ``"plan"`` is answered with the plan made (or None), and each
    ``"apply"`` applies the last plan where it holds, answered with whether it did.
    Ends when the writer closes its side."""
    setup = json.loads(commands.readline())
    conn = sqlite3.connect(setup["path"], isolation_level=None)
    for pragma in setup["pragmas"]:
        conn.execute(pragma)
    recipe = setup["recipe"]
    planned: Plan | None = None
    for line in commands:
        reply: dict[str, Any]
        try:
            if json.loads(line) == "plan":
                conn.execute("BEGIN")
                try:
                    planned = plan(conn, recipe)
                finally:
                    conn.execute("COMMIT")  # the snapshot ends; the plan stays in temp tables
                reply = {"planned": planned}
            else:
                conn.execute("BEGIN IMMEDIATE")
                applied = False
                if planned is not None and holds(conn, recipe, planned):
                    apply(conn, recipe, planned)
                    applied = True
                else:
                    discard(conn, recipe)
                conn.execute("COMMIT")
                planned = None
                reply = {"applied": applied}
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            planned = None
            reply = {"error": str(exc)}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    conn.close()


if __name__ == "__main__":
    serve(sys.stdin, sys.stdout)
