"""The fold of pending link counts into `links` (SQLite): its statements
(`recipe`, run by `fold_steps`), and the worker process a writer hands folds to.

A writer that can start one keeps a fold worker (`FoldWorker`): a process with its
own connection that runs `fold_steps`. Writes that make a fold due ask it to plan
one once they commit; the plan is made in the worker's snapshot while the writer
goes on, and applied by the worker when the writer hands it the write lock: after
one of its commits, the writer asks for it to be applied, and waits for that before
it begins its next write transaction. A worker is a process, not a thread: a
second connection of the same process running a statement (no GIL held) slows the
writer, beside another process it does not. SQLite shares state between a
process's connections, and the contention on it cost the writer more than a thread
gave back (the measurements are in the changelog).

Invariants: a plan is applied only where it still holds (`fold_steps.holds`), so
no count is applied twice or lost; the worker holds the write lock only while the
writer waits for it; a worker that cannot start, fails or dies leaves every
pending row in place, and the writer folds in its own transaction again.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path
from typing import IO, Any

from assocmem.links import fold_steps, once_seen

# The pending span: first and last id of the pending rows, the rows `links` held at
# the last fold, the last id then, and the last memory seq folded. One subquery each:
# SQLite answers a lone MIN or MAX of the key from the B-tree's edge, but both in one
# SELECT scan the table.
SPAN = (
    "SELECT (SELECT MIN(id) FROM pending_links), (SELECT MAX(id) FROM pending_links),"
    " (SELECT value FROM store_info WHERE key = 'links_at_fold'),"
    " (SELECT value FROM store_info WHERE key = 'pending_links_base'),"
    f" (SELECT value FROM store_info WHERE key = '{once_seen.FOLDED_SEQ}')"
)
# A writer with a worker folds in its own transaction once the pending changes no
# plan counts reach this many times the changes that make a fold due: a worker that
# falls behind never lets the pending list, and each reader's copy of it, grow
# past that bound.
BACKSTOP = 2


# The fold: each pending pair's changes summed into its `links` row (weight, count,
# outcome sum, feedback count, then the latest time). A pair with no row adds the
# once-seen count a memory folded before carries (`once_seen`), and gets a row only
# if its state is more than that: a count over 1, or feedback.
# How many memories folded before carry each end of a pending pair, counted up to
# `once_seen.COUNTED` (`fold_ends`): a pair is looked for from its rarer end.
_FOLD_ENDS = (
    "INSERT INTO temp.fold_ends SELECT d.scope_id, d.concept, "
    + once_seen.counted_sql("d.scope_id", "d.concept", once_seen.FOLDED)
    + ", "
    + once_seen.mark_sql("d.scope_id", "d.concept")
    + " FROM (SELECT DISTINCT p.scope_id, j.value AS concept"
    " FROM pending_links p, json_each(p.concepts) j) AS d"
)
# Ends that `once_seen.COMMON` memories folded so far carry are marked common as of
# the seq folded so far (before the first fold: 0, with nothing folded to count).
_COMMON_NOW = "since IS NULL AND n >= ?"
_SINCE_NOW = f"COALESCE({once_seen.FOLDED}, 0)"
# Kept in `fold_marks` until the plan is applied, where they join `links_common`.
_MARK_COMMON = (
    "INSERT INTO temp.fold_marks (scope_id, concept, since)"
    f" SELECT scope_id, concept, {_SINCE_NOW} FROM temp.fold_ends WHERE {_COMMON_NOW}"
)
_MARKED_ENDS = f"UPDATE temp.fold_ends SET since = {_SINCE_NOW} WHERE {_COMMON_NOW}"
_FOLD_PAIRS = (
    "INSERT INTO temp.fold_pairs SELECT h.*, CASE WHEN h.stored THEN 0 ELSE "
    + once_seen.walk_sql(
        "h.scope_id", "h.a", "h.b", ("ea.n", "eb.n", "ea.since", "eb.since"), once_seen.FOLDED
    )
    + " END, ea.since IS NOT NULL AND eb.since IS NOT NULL"
    " FROM (SELECT p.scope_id, p.a, p.b, {sums}, MAX(p.at) AS u, "
    + once_seen.stored_sql("p.scope_id", "p.a", "p.b")
    + " AS stored FROM pending_pairs p GROUP BY p.scope_id, p.a, p.b) AS h"
    " JOIN temp.fold_ends ea ON ea.scope_id = h.scope_id AND ea.concept = h.a"
    " JOIN temp.fold_ends eb ON eb.scope_id = h.scope_id AND eb.concept = h.b"
)
# A pair with no row that stays "count 1, weight 1, unrated" keeps none, unless its
# ends are both common: then it is stored from its first co-occurrence on.
_PLAIN = "NOT stored AND NOT common AND c + seen = 1 AND w + seen = 1 AND f = 0 AND o = 0"
_MARKS = (
    "INSERT INTO links_common (scope_id, concept_id, since)"
    " SELECT scope_id, concept, since FROM temp.fold_marks"
)
_COUNT_ONCE_SEEN = (
    "INSERT INTO links_once_seen (scope_id, pairs)"
    " SELECT scope_id, SUM(CASE WHEN seen THEN -1 ELSE 1 END) FROM temp.fold_pairs"
    f" WHERE seen OR ({_PLAIN}) GROUP BY scope_id"
    " ON CONFLICT (scope_id) DO UPDATE SET pairs = links_once_seen.pairs + excluded.pairs"
)
_FOLD = (
    "INSERT INTO links (scope_id, a, b, weight, count, outcome_sum, feedback_count,"
    " updated_at) SELECT scope_id, a, b, w + seen, c + seen, o, f, u FROM temp.fold_pairs"
    f" WHERE NOT ({_PLAIN}) ORDER BY scope_id, a, b"
    " ON CONFLICT (scope_id, a, b) DO UPDATE SET weight = links.weight + excluded.weight,"
    " count = links.count + excluded.count,"
    " outcome_sum = links.outcome_sum + excluded.outcome_sum,"
    " feedback_count = links.feedback_count + excluded.feedback_count,"
    " updated_at = MAX(links.updated_at, excluded.updated_at)"
)  # fmt: skip
_FEEDBACK_SUMS = (
    "SUM(p.count) + TOTAL(p.moved) AS w, SUM(p.count) AS c, TOTAL(p.outcome) AS o,"
    " COUNT(p.outcome) AS f"
)
# The same sums where no feedback is pending (writes' co-occurrence alone, the usual
# case): TOTAL of only NULLs is 0.0 and COUNT 0, and the sort carries less per pair.
_COUNT_SUMS = "SUM(p.count) + 0.0 AS w, SUM(p.count) AS c, 0.0 AS o, 0 AS f"

_FOLD_TABLES = (
    # Each pending pair once, with its row's presence and its once-seen count (a
    # memory folded before carries it): checked once, then counted and folded.
    "CREATE TEMP TABLE IF NOT EXISTS fold_pairs (scope_id INTEGER, a INTEGER,"
    " b INTEGER, w REAL, c INTEGER, o REAL, f INTEGER, u INTEGER, stored INTEGER,"
    " seen INTEGER, common INTEGER)",
    "CREATE TEMP TABLE IF NOT EXISTS fold_ends (scope_id INTEGER, concept INTEGER,"
    " n INTEGER, since INTEGER, PRIMARY KEY (scope_id, concept)) WITHOUT ROWID",
    "CREATE TEMP TABLE IF NOT EXISTS fold_marks (scope_id INTEGER, concept INTEGER, since INTEGER)",
)
_RECIPE: dict[str, Any] = {
    "span": SPAN,
    "feedback": "SELECT EXISTS (SELECT 1 FROM pending_links"
    " WHERE moved IS NOT NULL OR outcome IS NOT NULL)",
    "tables": list(_FOLD_TABLES),
    "discard": [f"DELETE FROM temp.{t}" for t in ("fold_pairs", "fold_ends", "fold_marks")],
    "pairs_counts": _FOLD_PAIRS.format(sums=_COUNT_SUMS),
    "pairs_feedback": _FOLD_PAIRS.format(sums=_FEEDBACK_SUMS),
    "seq": "SELECT COALESCE(MAX(seq), 0) FROM memories",
    "apply": [_MARKS, _COUNT_ONCE_SEEN, _FOLD],
    "delete": "DELETE FROM pending_links WHERE id <= ?",
    # The next rows number on from the last one: ids are never reused. Every memory
    # of the plan's snapshot is now counted: its once-seen pairs are read from it
    # from here on (`once_seen`).
    "done": "INSERT INTO store_info (key, value) VALUES"
    " ('links_at_fold', (SELECT COUNT(*) FROM links)), ('pending_links_base', ?),"
    f" ('{once_seen.FOLDED_SEQ}', ?)"
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
}


def recipe() -> dict[str, Any]:
    """The fold's statements, as `fold_steps` runs them."""
    # Ends common by now are marked before the pairs are weighed, so this fold
    # already gives every pair between marked ends a row (`once_seen`).
    common = once_seen.COMMON
    plan = [(_FOLD_ENDS, []), (_MARK_COMMON, [common]), (_MARKED_ENDS, [common])]
    return {**_RECIPE, "plan": plan}


class FoldWorker:
    """A writer's fold worker process (`fold_steps.serve`) on the store at ``path``,
    its connection taking ``pragmas``; nothing of it is shared with the writer but
    the store file.

    Used by one writer connection, under its lock: after a commit, `hand_over` lets
    a plan made (`ready`) be applied and `request` asks for the next; `wait`, before
    the next write transaction begins, waits for the plan being applied. The worker
    answers in the order it was asked. `alive` turns False for good once the process
    fails.
    """

    def __init__(self, path: str, pragmas: tuple[str, ...]) -> None:
        self.alive = True
        self.owner = os.getpid()  # a forked child's writer starts a worker of its own
        self.through = 0  # the last pending id the plan asked for or made counts
        self._asked: deque[str] = deque()  # "plan" and "apply" sent, not yet answered
        self._planned = False  # a plan is made and not yet handed over
        self._replies: queue.SimpleQueue[Any] = queue.SimpleQueue()
        script = Path(fold_steps.__file__)
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-S", str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._send_to: IO[str] = self._process.stdin
        threading.Thread(
            target=self._read, args=(self._process.stdout,), name="assocmem-fold", daemon=True
        ).start()
        self._send({"path": path, "pragmas": list(pragmas), "recipe": recipe()})

    def request(self, through: int) -> None:
        """Plan a fold of what is pending, up to ``through`` at least (none while a plan
        is asked for or waits to be handed over)."""
        if self.alive and not self._planned and "plan" not in self._asked:
            self._send("plan", expect="plan")
            self.through = through

    def ready(self, *, wait: bool) -> bool:
        """Whether a plan is made and waits to be handed over (with ``wait``, once the
        plan being made is made)."""
        while "plan" in self._asked and self._answer(block=wait):
            pass  # answers come in the order asked: an apply's before the plan's
        return self._planned

    def hand_over(self, *, wait: bool) -> None:
        """A writer committed: a plan made is applied now (with ``wait``, the plan being
        made too, once made). Returns at once; `wait` waits for the applying."""
        if self.ready(wait=wait):
            self._planned = False
            self._send("apply", expect="apply")

    def wait(self) -> None:
        """Return once no plan is being applied (before a write transaction begins)."""
        while "apply" in self._asked and self._answer(block=True):
            pass

    def close(self) -> None:
        """Stop the worker: a plan not applied is dropped (its rows stay pending)."""
        self.alive = False
        self._asked.clear()
        self._planned, self.through = False, 0
        try:
            self._send_to.close()
        except OSError:
            pass
        try:
            self._process.wait(timeout=_STOP_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _answer(self, *, block: bool) -> bool:
        """Take the worker's next answer (``block``: wait for it); whether one came."""
        try:
            reply = self._replies.get(block=block)
        except queue.Empty:
            return False
        if reply is None or "error" in reply:
            self.close()  # a worker that failed once is not trusted again
            return False
        asked = self._asked.popleft()
        if asked == "plan" and reply["planned"] is not None:
            self._planned, self.through = True, int(reply["planned"][1])
        elif not self._planned and "plan" not in self._asked:
            self.through = 0
        return True

    def _send(self, message: Any, *, expect: str | None = None) -> None:
        try:
            self._send_to.write(json.dumps(message) + "\n")
            self._send_to.flush()
        except (OSError, ValueError):
            self.close()
            return
        if expect is not None:
            self._asked.append(expect)

    def _read(self, replies: IO[str]) -> None:
        for line in replies:
            self._replies.put(json.loads(line))
        self._replies.put(None)  # the worker ended


# How long a closing writer waits for its worker to end a fold it is applying.
_STOP_S = 30.0
