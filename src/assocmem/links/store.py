"""Co-occurrence links in SQL: counting, the pending list and its fold, feedback's
moves, the neighbour queries that read counted and pending changes as one (in one
statement on PostgreSQL, which buffers no counts), the count `stats` reports, and a
whole store's links out and back in.

A mixin of `SQLStore`. Invariants: no increment is lost, because each is a single
upsert or an appended pending row inside a write transaction; a read sums
`links`, the once-seen pairs SQLite keeps no row for (`once_seen`) and this
connection's copy of `pending_links`, taken in the same snapshot, so a pair reads
the same whether its counts are pending, folded or once-seen.
"""

from __future__ import annotations

import json
import os
import weakref
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from itertools import combinations
from typing import Any

from assocmem.links import fold_steps, folding, once_seen, pending_links
from assocmem.links.pending_links import PendingLinks, PendingSide
from assocmem.links.rows import LearnedLink
from assocmem.order import best_first, heaviest_first
from assocmem.store.connection import roles_of
from assocmem.store.core import SQLStore
from assocmem.store.params import KEYED, chunked, id_array, in_list, padded, translated
from assocmem.store.parts import StorePart, Written
from assocmem.store.protocol import LinkRow
from assocmem.store.refold import later
from assocmem.text import times
from assocmem.types import Scope


def _link_row(a: int, b: int, w: float, c: int, o: float, f: int, at: int) -> LinkRow:
    """A `links` row summed over layers; its time is stored in microseconds."""
    return LinkRow(a, b, float(w), int(c), float(o), int(f), times.from_micros(int(at)))


class LinkQueries(SQLStore):
    """The co-occurrence links of the SQL store: a part mixed into `SQLStore`."""

    # Whether folds that writes make due go to a fold worker, where the engine can
    # start one (`fold_worker_settings`). Tests of a fold's own steps fold in the
    # writer's transaction, at the write that makes it due.
    folds_in_background = True

    def init_pending_copy(self) -> None:
        """A new connection's copy of `pending_links` (empty where counts are not
        buffered)."""
        self._pending_links = PendingLinks()
        # The pending span as this connection's last append left it, and the data
        # version it holds for: another connection's commit moves the version, and a
        # rollback or a fold here drops it. Saves a write reading back what it
        # appended last.
        self._span_written: tuple[Any, tuple[int | None, int, int, int, int]] | None = None
        self._worker: folding.FoldWorker | None = None
        self._worker_failed = False
        self._fold_asked: int | None = None  # a fold is due: asked of the worker at commit

    def drop_pending_copy(self, level: int) -> None:
        """A rollback's hook: the copy may hold rows the rollback takes back."""
        self._pending_links.clear()
        self._span_written = None
        if level == 0:
            self._fold_asked = None

    def count_written(self, written: Sequence[Written], at: int) -> None:
        """A write's hook: one co-occurrence for every pair of each memory's concepts."""
        self.count_cooccurrence([(w.layer, w.concepts) for w in written], at)

    def uncount_cooccurrence(self, seq: int, layer: int) -> None:
        # What a memory's write added to its layer's links (1 per pair, to count and
        # weight) is taken back; what feedback added stays: it was learned from answers.
        concepts = sorted(
            c for (c,) in self._query(
                "SELECT concept_id FROM memory_concepts WHERE memory_seq = ?", [seq]
            )
        )  # fmt: skip
        if self.buffers_link_counts:  # its once-seen pairs go with it
            once_seen.count_change(self, {layer: -once_seen.only_through(self, seq, layer)})
        pairs = Counter(combinations(concepts, 2))
        rows = [(n, n, layer, a, b) for (a, b), n in sorted(pairs.items())]
        self._conn.executemany(
            "UPDATE links SET count = count - ?, weight = weight - ? WHERE scope_id = ?"
            " AND a = ? AND b = ?",
            rows,
        )
        # A link nothing but this memory made leaves no row behind: its mere
        # existence would say the two concepts were once written together.
        self._conn.executemany(
            "DELETE FROM links WHERE scope_id = ? AND a = ? AND b = ? AND count <= 0"
            " AND feedback_count = 0",
            [(layer, a, b) for _, _, layer, a, b in rows],
        )

    def drop_uncarried_links(self, layers: Sequence[int], gone: Sequence[int]) -> None:
        """A forget's hook: a concept no memory of the agent (in ``layers``) carries any
        more must not survive as the end of a link, learned or counted: it would give
        the forgotten text back."""
        for concept in gone:
            self._conn.execute(
                f"DELETE FROM links WHERE {in_list('scope_id', layers)} AND (a = ? OR b = ?)",
                [*layers, concept, concept],
            )
        if self.buffers_link_counts:
            if gone:  # no mark of them stays either
                self._conn.execute(
                    f"DELETE FROM links_common WHERE {in_list('scope_id', layers)}"
                    f" AND {in_list('concept_id', gone)}",
                    [*layers, *gone],
                )
            # A new memory may take the seq of one just deleted, and its counts are
            # pending: it must not be read as folded too (`once_seen`).
            self._conn.execute(
                "UPDATE store_info SET value = (SELECT COALESCE(MAX(seq), 0) FROM memories)"
                " WHERE key = ?",
                [once_seen.FOLDED_SEQ],
            )

    def merge_links(self, merged: Mapping[int, int]) -> None:
        """A refold's hook: each pair touching a merged concept is re-keyed to its new
        ends and summed; a memory that carried two merged spellings keeps each of its
        pairs counted once, as a write of it today would (and `forget` takes back)."""
        if self.buffers_link_counts:
            involved = sorted({*merged, *merged.values()})
            _store_once_seen(self, involved)
            # Unmarked, a merged concept's pairs need no row they lack; a later fold
            # marks it again once it is common.
            self._conn.execute(
                f"DELETE FROM links_common WHERE {in_list('concept_id', involved)}", involved
            )
        overcounts = _overcounts(self, merged)
        _merge_links(self)
        _uncount_overcounts(self, overcounts)

    def move_links(self, seq: int, old: int, new: int) -> None:
        """An update's hook: a memory moved layers, so its write's pairs move with it."""
        self.uncount_cooccurrence(seq, old)
        concepts = sorted(
            c for (c,) in self._query(
                "SELECT concept_id FROM memory_concepts WHERE memory_seq = ?", [seq]
            )
        )  # fmt: skip
        at = times.to_micros(times.now())
        if not self.buffers_link_counts:
            self.count_cooccurrence([(new, concepts)], at)
            return
        # Counted here, not appended: the memory is folded (`settle` ran), so its pairs
        # in the new layer are once-seen through it where nothing else holds them. A
        # pair with a row gains a count; one another folded memory of the layer carries
        # (once-seen through it) is stored with both counts. The memory's own concept
        # rows still name the old layer here.
        once_seen.count_change(self, {new: once_seen.joining(self, seq, concepts, new)})
        pairs = list(combinations(concepts, 2))
        self._conn.executemany(
            "UPDATE links SET count = count + 1, weight = weight + 1, updated_at = ?"
            " WHERE scope_id = ? AND a = ? AND b = ?",
            [(at, new, a, b) for a, b in pairs],
        )
        # A pair with no row gets one counting both memories where another carries it,
        # or counting this one where both its ends are common in the layer and this
        # memory comes after their marks (`once_seen`).
        self._conn.executemany(
            "WITH p (layer, a, b, at, seq) AS (VALUES (?, ?, ?, ?, ?))"
            " INSERT INTO links (scope_id, a, b, weight, count, updated_at)"
            " SELECT layer, a, b, 1 + carried, 1 + carried, at FROM (SELECT p.*, "
            + once_seen.carried_sql("p.layer", "p.a", "p.b", once_seen.FOLDED)
            + " AS carried FROM p WHERE NOT " + once_seen.stored_sql("p.layer", "p.a", "p.b")
            + ") WHERE carried OR " + once_seen.common_after("layer", "a", "b", "seq"),
            [(new, a, b, at, seq) for a, b in pairs],
        )  # fmt: skip

    def count_cooccurrence(self, groups: Sequence[tuple[int, Sequence[int]]], at: int) -> None:
        """Add one co-occurrence to every pair of each group's concepts: ``groups`` holds
        ``(layer, concept ids of one memory)``; ``at``: the time in microseconds (see
        times.py)."""
        groups = [(layer, sorted(ids)) for layer, ids in groups if len(ids) > 1]
        if self.buffers_link_counts:
            self._append_pending([(layer, ids, 1, at, None, None) for layer, ids in groups])
            return
        pairs = Counter((layer, a, b) for layer, ids in groups for a, b in combinations(ids, 2))
        # One upsert per pair: the increment happens inside the statement, so two
        # writers can never read the same count and both write count + 1. Key order
        # keeps consecutive upserts on neighbouring B-tree pages.
        self._conn.executemany(
            "INSERT INTO links (scope_id, a, b, weight, count, updated_at) VALUES (?,?,?,?,?,?)"
            " ON CONFLICT (scope_id, a, b) DO UPDATE SET weight = links.weight + excluded.count,"
            " count = links.count + excluded.count, updated_at = excluded.updated_at",
            [(layer, a, b, n, n, at) for (layer, a, b), n in sorted(pairs.items())],
        )

    def _append_pending(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Append link changes (layer, concept ids ascending, count, at, weight moved by
        feedback, outcome) to the pending list: every pair of the ids changes. Fold the
        list once it is long enough. The last two are None on co-occurrence rows."""
        if not rows:
            return
        first, last, links, base, folded = self._span_to_append()
        number = last or base
        numbered = []
        for layer, ids, count, at, moved, outcome in rows:
            number += len(ids) * (len(ids) - 1) // 2  # see migration 0018
            numbered.append((number, layer, _id_list(ids), count, at, moved, outcome))
        self._conn.executemany(
            "INSERT INTO pending_links (id, scope_id, concepts, count, at, moved, outcome)"
            " VALUES (?,?,?,?,?,?,?)",
            numbered,
        )
        span = (first or numbered[0][0], number, links, base, folded)
        self._span_written = (self._current_version(), span)
        self._fold_when_due(number, base, links)

    def _span_to_append(self) -> tuple[int | None, int, int, int, int]:
        """`_pending_span`, as this connection's last append left it when no other
        connection has committed since (inside a write transaction: no one can meanwhile)."""
        known = self._span_written
        if known is not None and self._depth:
            version = self._current_version()
            if version is not None and version == known[0]:
                return known[1]
        return self._pending_span()

    def _pending_span(self) -> tuple[int | None, int, int, int, int]:
        """First and last id of the pending rows (last 0: none), the rows `links` held at
        the last fold, the last id then (the pair changes pending are the last id
        minus it), and the last memory seq folded (`once_seen.FOLDED_SEQ`)."""
        first, last, links, base, folded = self._query(folding.SPAN)[0]
        return first, last or 0, int(links or 0), int(base or 0), int(folded or 0)

    def _folded_seq(self) -> int:
        """The last memory seq whose co-occurrence is folded, as this snapshot sees it."""
        span: tuple[int | None, int, int, int, int] = self._remembered(
            "pending span", self._pending_span
        )
        return span[4]

    def fold_links(self) -> None:
        """Fold every pending count into `links`, inside the caller's write transaction
        (which excludes every other writer), then empty the pending list."""
        if not self.buffers_link_counts:
            return
        recipe = folding.recipe()
        planned = fold_steps.plan(self._conn, recipe)
        if planned is not None:
            fold_steps.apply(self._conn, recipe, planned)
        self._span_written = None
        self._pending_links.clear()

    def _fold_when_due(self, last: int, base: int, links: int) -> None:
        """Fold once the pending pair changes (ids past ``base`` up to ``last``) reach
        `pending_links.fold_at`: by the fold worker where the store has one, once
        those no plan of it counts reach that, and here once they reach
        `folding.BACKSTOP` times that (or with no worker)."""
        due = pending_links.fold_at(links)
        if last - base < due:
            return
        worker = self._fold_worker()
        if worker is None:
            self.fold_links()
            return
        waiting = last - max(base, worker.through)
        if waiting >= folding.BACKSTOP * due:
            self.fold_links()
        elif waiting >= due:
            self._fold_asked = last  # asked once committed, so the worker's snapshot sees it

    def _fold_worker(self) -> folding.FoldWorker | None:
        """This store's fold worker, started at its first fold due, or None where the
        store folds in its writer's transaction (no worker can start, or one failed)."""
        worker = self._own_worker()
        if worker is None and self.folds_in_background and not self._worker_failed:
            where = self.fold_worker_settings()
            if where is not None:
                try:
                    worker = self._worker = folding.FoldWorker(*where)
                except OSError:
                    self._worker_failed = True
                    return None
                # A store dropped without close still ends its worker.
                weakref.finalize(self, worker.close)
        if worker is not None and not worker.alive:
            self._worker, self._worker_failed = None, True
            return None
        return worker

    def _own_worker(self) -> folding.FoldWorker | None:
        """The fold worker this process started (a forked child's copy of the store
        does not share its parent's)."""
        worker = self._worker
        if worker is not None and worker.owner != os.getpid():
            worker = self._worker = None
        return worker

    def fold_worker_settings(self) -> tuple[str, tuple[str, ...]] | None:
        """The store a fold worker opens and the settings its connection takes (the
        engine's own); None: the engine folds in its writer's transaction only."""
        return None

    def wait_for_fold(self) -> None:
        """Before a write transaction begins: a plan the worker is applying is applied."""
        worker = self._own_worker()
        if worker is not None:
            worker.wait()

    def ask_for_fold(self) -> None:
        """A commit's hook: a plan the worker made is applied now that no transaction
        holds the lock (where this commit made another fold due, the plan being made
        too, once made), and that fold is asked for."""
        worker, asked = self._own_worker(), self._fold_asked
        self._fold_asked = None
        if worker is not None:
            worker.hand_over(wait=asked is not None)
            if asked is not None:
                worker.request(asked)

    def finish_folds(self) -> None:
        """Apply the fold the worker is planning or has planned, and return once it is
        applied (outside a transaction: a writer about to measure or copy the store)."""
        with self._lock:  # the worker is driven by one thread at a time, as in the hooks
            worker = self._own_worker()
            if worker is not None:
                worker.hand_over(wait=True)
                worker.wait()

    def stop_folding(self) -> None:
        """A close's hook: the fold worker ends; a plan it had not applied is dropped."""
        self.folds_in_background = False  # a closing part's last write folds here
        with self._lock:
            worker = self._own_worker()
            if worker is not None:
                worker.close()
                self._worker = None

    def _pending(self) -> PendingLinks:
        """This connection's copy of `pending_links`, brought up to date. Call inside a
        snapshot or transaction, so it agrees with what the same read sees of `links`."""
        pending = self._pending_links
        if not self.buffers_link_counts:
            return pending
        first, last, _, _, _ = self._remembered("pending span", self._pending_span)
        if first is None or first != pending.first or last < pending.last:
            pending.clear()  # empty, or folded since the copy was made
        if first is not None and last > pending.last:
            with self._lock:  # rows streamed from the cursor, never all in one list
                pending.add(
                    self._conn.execute(
                        "SELECT id, scope_id, concepts, count, moved, outcome"
                        " FROM pending_links WHERE id > ? ORDER BY id",
                        [pending.last],
                    )
                )
        return pending

    @translated
    def adjust_links(
        self, scope: Scope, changes: Sequence[tuple[str, int, int, float]], outcome: float
    ) -> None:
        at = times.to_micros(times.now())
        with self.transaction():
            layers = {key: self._own_layer(scope, roles_of(key)) for key, *_ in changes}
            if self.buffers_link_counts:
                self._append_pending(
                    [(layers[key], (a, b), 0, at, delta, outcome) for key, a, b, delta in changes]
                )
                return
            self._conn.executemany(
                "INSERT INTO links (scope_id, a, b, weight, count, outcome_sum, feedback_count,"
                " updated_at) VALUES (?,?,?,?,0,?,1,?) ON CONFLICT (scope_id, a, b) DO UPDATE SET"
                " weight = links.weight + excluded.weight,"
                " outcome_sum = links.outcome_sum + excluded.outcome_sum,"
                " feedback_count = links.feedback_count + 1, updated_at = excluded.updated_at",
                [(layers[key], a, b, delta, outcome, at) for key, a, b, delta in sorted(changes)],
            )

    @translated
    def neighbors(
        self, scope: Scope, concept_ids: Sequence[int], *, min_weight: float, limit: int
    ) -> list[tuple[int, int, float]]:
        layers = self._layers(scope)
        if not concept_ids or not layers:
            return []
        # If the summed weight over L layers reaches the threshold, one layer holds at
        # least threshold / L: scanning each layer from that floor loses no link.
        floor = min_weight / len(layers)
        with self.snapshot():  # the walk and the other layers' sums from one state
            found = self._neighbor_weights(scope, layers, concept_ids, floor, limit)
        # Strongest first, ties on the two ends' ids.
        ranked = best_first({ends: w for ends, w in found.items() if w >= min_weight}, limit)
        return [(src, other, found[(src, other)]) for src, other in ranked]

    def _neighbor_weights(
        self,
        scope: Scope,
        layers: Sequence[int],
        concept_ids: Sequence[int],
        floor: float,
        limit: int,
    ) -> dict[tuple[int, int], float]:
        """``{(concept, other end): weight summed over the reader's layers}`` of each
        concept's ``limit`` strongest links on each side in each layer, at or above
        ``floor``."""
        if self.dialect == "postgres":
            return self._walk_in_one_statement(scope, layers, concept_ids, floor, limit)
        wanted = [
            (layer, concept, concept_is_a)
            for layer in layers
            for concept in concept_ids
            for concept_is_a in (True, False)
        ]
        # Each side's strongest links are kept with the read memo: they change only with
        # `links` or the pending list, and a read that asks a concept an earlier one
        # asked (a speaker's name, a common word) finds its sides there.
        memo = self._memo(("strongest sides", floor, limit))
        kept: dict[tuple[int, int, bool], dict[int, float]] = memo if memo is not None else {}
        missing = [key for key in wanted if key not in kept]
        if missing:
            kept.update(self._strongest_sides(missing, floor, limit))
        found = [(key[1], other, weight) for key in wanted for other, weight in kept[key].items()]
        return self._over_layers(scope, layers, found)

    def _strongest_sides(
        self, wanted: Sequence[tuple[int, int, bool]], floor: float, limit: int
    ) -> dict[tuple[int, int, bool], dict[int, float]]:
        """Each side's ``limit`` strongest links at or above ``floor``, with their pending
        changes: ``{(layer, concept, concept is the lower id): {other end: weight}}``."""
        pending = self._pending()
        sides = {key: pending.side(key[0], key[1], concept_is_a=key[2]) for key in wanted}
        # Feedback may have lowered pending pairs: one more row per lowered pair keeps
        # `limit` rows whose weights nothing lowered.
        needed = {key: limit + (side.lowered() if side else 0) for key, side in sides.items()}
        # A side with pending pairs to resolve reads twice as deep: the last row read
        # bounds what every row not read weighs (`_resolve_pending`).
        deep = {
            key: n * (2 if (side := sides[key]) and side.unresolved else 1)
            for key, n in needed.items()
        }
        fetched = self._strongest_rows(list(deep.items()), floor)
        # Each side's rows that rank it, with their pending changes, and its bar.
        ranked: dict[tuple[int, int, bool], tuple[dict[int, float], float]] = {}
        for key, side in sides.items():
            if side is not None:
                weights = _with_pending(side, fetched[key][: needed[key]])
                ranked[key] = (weights, _bar(weights.values(), floor, limit))
        self._resolve_pending(sides, fetched, deep, ranked, floor)
        return {
            key: _strongest(side, *ranked[key], floor)
            if (side := sides[key]) is not None
            else dict(fetched[key][: needed[key]])
            for key in wanted
        }

    def _walk_in_one_statement(
        self,
        scope: Scope,
        layers: Sequence[int],
        concept_ids: Sequence[int],
        floor: float,
        limit: int,
    ) -> dict[tuple[int, int], float]:
        """`_neighbor_weights` on PostgreSQL, which does not buffer link counts."""
        # The shared walk in one statement: one per concept, side and layer cost a
        # round trip and a plan each, most of a read's statements. Link counts are
        # never pending here, so the rows are the weights. Its plan is one for every
        # concept (an ordered index scan cut by LIMIT, migration 0019), so it is kept:
        # planning it took longer than running it.
        rows = self._query(
            f"{KEYED}SELECT c.concept, s.other, s.weight"
            f" FROM unnest({id_array(concept_ids)}) AS c(concept),"
            f" unnest({id_array(layers)}) AS l(layer),"
            " LATERAL ((SELECT b AS other, weight FROM links"
            "  WHERE scope_id = l.layer AND a = c.concept AND weight >= ?"
            "  ORDER BY weight DESC, b LIMIT ?)"
            " UNION ALL (SELECT a, weight FROM links"
            "  WHERE scope_id = l.layer AND b = c.concept AND weight >= ?"
            "  ORDER BY weight DESC, a LIMIT ?)) AS s",
            [*padded(concept_ids), *padded(layers), floor, limit, floor, limit],
        )
        return self._over_layers(scope, layers, rows)

    def _strongest_rows(
        self, sides: Sequence[tuple[tuple[int, int, bool], int]], floor: float
    ) -> dict[tuple[int, int, bool], list[tuple[int, float]]]:
        """For each side ``(layer, concept, concept is the lower id)`` and its row
        limit, its strongest stored links at or above ``floor``, strongest first (ties
        on the other end's id): one statement for many sides, each cut by its own
        LIMIT on its own index range. Kept with the read memo (`links` changes only
        at a fold, a write): a side read before with as many rows, or all it has,
        asks nothing."""
        kept = self._kept_lists(
            ("strongest links", floor), sides, lambda missing: self._fetch_strongest(missing, floor)
        )
        return {key: kept[key][:limit] for key, limit in sides}

    def _fetch_strongest(
        self, sides: Sequence[tuple[tuple[int, int, bool], int]], floor: float
    ) -> dict[tuple[int, int, bool], list[tuple[int, float]]]:
        found: dict[tuple[int, int, bool], list[tuple[int, float]]] = {k: [] for k, _ in sides}
        parts = []
        for (layer, concept, concept_is_a), limit in sides:
            near, far = ("a", "b") if concept_is_a else ("b", "a")
            parts.append((
                f"SELECT {{n}}, other, weight FROM (SELECT {far} AS other, weight FROM links"
                f" WHERE scope_id = ? AND {near} = ? AND weight >= ?"
                f" ORDER BY weight DESC, {far} LIMIT ?) AS side{{n}}",
                [layer, concept, floor, limit],
            ))  # fmt: skip
        for index, (other, weight) in self._union(parts):
            found[sides[index][0]].append((other, weight))
        for rows in found.values():  # a union keeps no order across its parts
            heaviest_first(rows)
        if self.buffers_link_counts and floor <= 1.0:
            self._add_once_seen(sides, found)
        return found

    def _add_once_seen(
        self,
        sides: Sequence[tuple[tuple[int, int, bool], int]],
        found: dict[tuple[int, int, bool], list[tuple[int, float]]],
    ) -> None:
        """Merge each side's once-seen pairs (weight 1, `once_seen`) into its strongest
        stored rows ``found``, where fewer than its limit of those outweigh them."""
        short = [(key, n) for key, n in sides if sum(w > 1.0 for _, w in found[key]) < n]
        if not short:
            return
        seen: dict[tuple[int, int, bool], list[tuple[int, float]]] = {}
        for index, other in once_seen.side_partners(self, short, self._folded_seq()):
            seen.setdefault(short[index][0], []).append((other, 1.0))
        for key, limit in short:
            if key in seen:
                found[key] = heaviest_first(found[key] + seen[key])[:limit]

    def _resolve_pending(
        self,
        sides: Mapping[tuple[int, int, bool], PendingSide | None],
        fetched: Mapping[tuple[int, int, bool], list[tuple[int, float]]],
        depth: Mapping[tuple[int, int, bool], int],
        ranked: Mapping[tuple[int, int, bool], tuple[dict[int, float], float]],
        floor: float,
    ) -> None:
        """Give each side's pending pairs their folded weight where it can matter:
        from the rows just fetched (``depth`` asked of each side) where they are among
        them, the rest read in one statement for all sides (`once_seen.folded_weights`).

        A pair joins a side's strongest only if it reaches the side's bar (`_bar`, in
        ``ranked``). One the rows do not hold weighs at most the last row fetched, if
        the fetch was cut by its depth, or else 1 (once-seen) or below the floor; one
        found to have no row, at most 1. A pair that cannot reach the bar whatever it
        weighs stays unresolved and is not asked for: most of a common concept's
        pending pairs, as its strongest links outweigh a few new counts."""
        asked: dict[tuple[int, int, int], bool] = {}  # pair -> walk it if it has no row
        looked: list[tuple[PendingSide, int, tuple[int, int, int]]] = []
        settled: list[tuple[PendingSide, tuple[float, float]]] = []
        for key, side in sides.items():
            if side is None or not side.unresolved:
                continue
            rows = fetched[key]
            unread = max(1.0, floor, rows[-1][1] if len(rows) >= depth[key] else floor)
            bar = ranked[key][1]
            if side.settled == (unread, bar):
                continue  # nothing changed since this side was last resolved
            settled.append((side, (unread, bar)))
            for other, weight in rows:
                side.resolve(other, weight)
            waiting, side.unresolved = side.unresolved, []
            for other in waiting:
                pair = side.pairs[other]
                if pair.stored is not None:
                    continue  # resolved by a row or from its other end
                side.unresolved.append(other)
                rowless = other in side.rowless
                if (1.0 if rowless else unread) + pair.weight >= bar:
                    ends = (key[0], min(key[1], other), max(key[1], other))
                    asked[ends] = asked.get(ends, False) or 1.0 + pair.weight >= bar
                    looked.append((side, other, ends))
        if asked:
            folded = once_seen.folded_weights(self, asked, self._folded_seq())
            for side, other, ends in looked:
                if ends in folded:
                    side.resolve(other, folded[ends])
                elif asked[ends]:
                    side.resolve(other, 0.0)
                else:
                    side.rowless.add(other)
        for side, state in settled:
            side.resolved(state)

    def _over_layers(
        self, scope: Scope, layers: Sequence[int], rows: Iterable[tuple[int, int, float]]
    ) -> dict[tuple[int, int], float]:
        """``{(concept, other end): weight}`` of the pairs among each layer's strongest
        links. With several layers each pair's weight is read whole, summed over all of
        them (`_summed`): a link among one layer's strongest may fall below the cut in
        another and still count there."""
        found: dict[tuple[int, int], float] = {}
        for concept, other, weight in rows:
            found[(concept, other)] = found.get((concept, other), 0.0) + weight
        return self._summed(scope, list(found)) if len(layers) > 1 else found

    def _summed(
        self, scope: Scope, pairs: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], float]:
        ordered = [(min(s, o), max(s, o)) for s, o in pairs]
        sums = self.links_between(scope, ordered)
        return {(s, o): sums.get((min(s, o), max(s, o)), 0.0) for s, o in pairs}

    @translated
    def links_between(
        self, scope: Scope, pairs: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], float]:
        wanted, layers = set(pairs), self._layers(scope)
        if not wanted or not layers:
            return {}
        with self.snapshot():
            pending = self._pending()
            sums = {pair: row.weight for pair, row in self._rows_of(layers, list(wanted)).items()}
        for a, b in wanted if pending else ():
            for layer in layers:
                if change := pending.pair(layer, a, b):
                    sums[(a, b)] = sums.get((a, b), 0.0) + change.weight
        return sums

    @translated
    def links_around(self, scope: Scope, concept_ids: Sequence[int], limit: int) -> list[LinkRow]:
        layers = self._layers(scope)
        if not concept_ids or not layers:
            return []
        with self.snapshot():
            pending = self._pending()
            changes = pending.around(layers, concept_ids)
            # A pending change only lowers a pair by feedback; fetching one more row per
            # lowered pair keeps at least `limit` rows the query ranked truthfully.
            lowered = sum(sum(c.weight for c in change) < 0 for change in changes.values())
            # Ties at the cut are broken by the pair's names, never by concept ids: ids
            # are store-wide and in creation order, so they would tell which words
            # another agent used first.
            rows = self._query(
                "SELECT l.a, l.b, l.w, l.c, l.o, l.f, l.u, ca.name, cb.name FROM ("
                "SELECT a, b, SUM(weight) AS w, SUM(count) AS c, SUM(outcome_sum) AS o,"
                " SUM(feedback_count) AS f, MAX(updated_at) AS u"
                f" FROM links WHERE {in_list('scope_id', layers)}"
                f" AND ({in_list('a', concept_ids)} OR {in_list('b', concept_ids)})"
                " GROUP BY a, b) l JOIN concepts ca ON ca.id = l.a JOIN concepts cb ON cb.id = l.b"
                " ORDER BY l.w DESC,"
                " CASE WHEN ca.name < cb.name THEN ca.name ELSE cb.name END,"
                " CASE WHEN ca.name < cb.name THEN cb.name ELSE ca.name END LIMIT ?",
                [*layers, *concept_ids, *concept_ids, limit + lowered],
            )
            links = {(r[0], r[1]): _link_row(*r[:7]) for r in rows}
            names: dict[int, str] = {}
            for r in rows:
                names[r[0]], names[r[1]] = r[7], r[8]
            # Once-seen pairs (`once_seen`) add 1 a layer: a pair the query cut may reach
            # the top with them, so each is read whole. One layer's are weight 1 alone:
            # they cannot pass `limit` rows over 1.
            around = self.buffers_link_counts and not (
                len(layers) == 1 and len(rows) >= limit + lowered and rows[-1][2] > 1
            )
            if around:
                seen = once_seen.pairs_around(self, layers, concept_ids, self._folded_seq())
                outside = sorted({(a, b) for _, a, b in seen} - links.keys())
                links.update(self._rows_of(layers, outside, once=False))
                _add_seen(links, seen)
            if changes:
                # A pair the query left out and nothing changed is weaker than `limit`
                # pairs it returned, so merging the pending pairs keeps the top exact.
                # (Once-seen pairs around the concepts are in `links` already if read.)
                links.update(
                    self._rows_of(layers, [p for p in changes if p not in links], once=not around)
                )
                written = self._pending_written([c.last_row for cs in changes.values() for c in cs])
                for (a, b), change in changes.items():
                    row = links.get((a, b)) or LinkRow(a, b, 0.0, 0, 0.0, 0, "")
                    links[(a, b)] = LinkRow(
                        a, b,
                        row.weight + sum(c.weight for c in change),
                        row.count + sum(c.count for c in change),
                        row.outcome_sum + sum(c.outcome_sum for c in change),
                        row.feedback_count + sum(c.feedback_count for c in change),
                        max(row.updated_at, *(written[c.last_row] for c in change)),
                    )  # fmt: skip
            # Only a pair the query did not return needs its names looked up.
            unnamed = sorted({c for pair in links for c in pair} - names.keys())
            if unnamed:
                names.update(self._names_by_id(unnamed))
        ranked = sorted(
            links.values(),
            key=lambda r: (-r.weight, *sorted((names.get(r.a, ""), names.get(r.b, "")))),
        )[:limit]
        return [replace(row, weight=max(0.0, row.weight)) for row in ranked]

    def _rows_of(
        self, layers: Sequence[int], pairs: Sequence[tuple[int, int]], *, once: bool = True
    ) -> dict[tuple[int, int], LinkRow]:
        """The stored links of ``pairs``, summed over ``layers``, with the once-seen ones
        (`once_seen`) unless ``once`` is false."""
        found = self._stored_rows_of(layers, pairs)
        if once and self.buffers_link_counts and pairs:
            seen = once_seen.pairs_seen_once(
                self, [(layer, a, b) for layer in layers for a, b in pairs], self._folded_seq()
            )
            _add_seen(found, seen)
        return found

    def _stored_rows_of(
        self, layers: Sequence[int], pairs: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], LinkRow]:
        found: dict[tuple[int, int], LinkRow] = {}
        for chunk in chunked(sorted(pairs)):  # two IN lists of at most CHUNK ids each
            firsts, seconds = sorted({a for a, _ in chunk}), sorted({b for _, b in chunk})
            wanted = set(chunk)
            for a, b, w, c, o, f, u in self._query(
                "SELECT a, b, SUM(weight), SUM(count), SUM(outcome_sum), SUM(feedback_count),"
                f" MAX(updated_at) FROM links WHERE {in_list('scope_id', layers)}"
                f" AND {in_list('a', firsts)} AND {in_list('b', seconds)} GROUP BY a, b",
                [*layers, *firsts, *seconds],
            ):
                if (a, b) in wanted:
                    found[(a, b)] = _link_row(a, b, w, c, o, f, u)
        return found

    def count_links(self, where: str, layers: Sequence[int]) -> dict[str, int]:
        """The stats hook: the concept pairs linked in ``layers``, pending and once-seen
        ones included."""
        if not self.buffers_link_counts:
            sql = f"SELECT COUNT(*) FROM (SELECT 1 FROM links WHERE {where} GROUP BY a, b) AS pairs"
            return {"links": int(self._query(sql, layers)[0][0])}
        folded = self._folded_seq()
        if len(layers) > 1:  # a pair may be in several layers: each counted once
            once = once_seen.all_pairs_sql(in_list("x.scope_id", layers))
            sql = (
                f"SELECT COUNT(*) FROM (SELECT a, b FROM links WHERE {where}"
                f" UNION SELECT a, b FROM pending_pairs WHERE {where}"
                f" UNION SELECT a, b FROM ({once})) AS pairs"
            )
            return {"links": int(self._query(sql, [*layers, *layers, *layers, folded])[0][0])}
        # One layer: the rows and pending pairs, and its count of once-seen pairs less
        # those a pending change also names.
        (n,) = self._query(
            f"SELECT (SELECT COUNT(*) FROM (SELECT a, b FROM links WHERE {where}"
            f" UNION SELECT a, b FROM pending_pairs WHERE {where}))"
            f" + (SELECT COALESCE(SUM(pairs), 0) FROM links_once_seen WHERE {where})"
            " - (SELECT COUNT(*) FROM (SELECT DISTINCT scope_id, a, b FROM pending_pairs"
            f"   WHERE {where}) p WHERE NOT "
            + once_seen.stored_sql("p.scope_id", "p.a", "p.b")
            + " AND "
            + once_seen.carried_sql("p.scope_id", "p.a", "p.b", "?")
            + ")",
            [*layers, *layers, *layers, *layers, folded],
        )[0]
        return {"links": int(n)}

    # -- portable: a whole store's links out and back in

    @translated
    def learned_links(self, scope: Scope) -> list[LearnedLink]:
        layers = self._layers(scope)
        if not layers:
            return []
        where = in_list("l.scope_id", layers)
        joined = (
            " JOIN scopes s ON s.id = l.scope_id JOIN concepts ca ON ca.id = l.a"
            f" JOIN concepts cb ON cb.id = l.b WHERE {where}"
            " GROUP BY s.access, ca.name, cb.name"
        )
        sums: dict[tuple[str, str, str], list[Any]] = {}
        with self.snapshot():
            parts = [
                "SELECT s.access, ca.name, cb.name, SUM(l.weight), SUM(l.count),"
                " SUM(l.outcome_sum), SUM(l.feedback_count), MAX(l.updated_at) FROM links l"
                + joined
            ]
            params: list[list[Any]] = [list(layers)]
            if self.buffers_link_counts:  # the pending rows, summed as the fold sums them
                parts.append(
                    "SELECT s.access, ca.name, cb.name, SUM(l.count) + TOTAL(l.moved),"
                    " SUM(l.count), TOTAL(l.outcome), COUNT(l.outcome), MAX(l.at)"
                    " FROM pending_pairs l" + joined
                )
                params.append(list(layers))
                # The once-seen pairs, each count 1 in its layer (`once_seen`).
                once = once_seen.all_pairs_sql(in_list("x.scope_id", layers))
                parts.append(
                    "SELECT s.access, ca.name, cb.name, COUNT(*) + 0.0, COUNT(*), 0.0, 0,"
                    f" MAX(l.at) FROM ({once}) l" + joined
                )
                params.append([*layers, self._folded_seq(), *layers])
            for sql, values in zip(parts, params, strict=True):
                for access, a, b, w, c, o, f, at in self._query(sql, values):
                    if isinstance(at, str):  # a once-seen pair: its memory's created_at
                        at = times.to_micros(at)
                    row = sums.setdefault((access, a, b), [0.0, 0, 0.0, 0, 0])
                    row[0] += float(w)
                    row[1] += int(c)
                    row[2] += float(o)
                    row[3] += int(f)
                    row[4] = max(row[4], int(at))
        return [
            LearnedLink(tuple(roles_of(access)), a, b, w, c, o, f, times.from_micros(at))
            for (access, a, b), (w, c, o, f, at) in sorted(sums.items())
        ]

    @translated
    def restore_links(self, scope: Scope, links: Sequence[LearnedLink]) -> None:
        if not links:
            return
        with self.transaction():
            self.fold_links()  # the exported state replaces the pair's whole count
            ids = self.intern_concepts([n for link in links for n in (link.a, link.b)])
            rows = sorted(
                (
                    self._own_layer(scope, link.access),
                    *sorted((ids[link.a], ids[link.b])),
                    link.weight,
                    link.count,
                    link.outcome_sum,
                    link.feedback_count,
                    times.to_micros(link.updated_at),
                )  # fmt: skip
                for link in links
                if ids[link.a] != ids[link.b]
            )
            if self.buffers_link_counts:
                rows = self._unless_once_seen(rows)
            self._conn.executemany(
                "INSERT INTO links (scope_id, a, b, weight, count, outcome_sum, feedback_count,"
                " updated_at) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (scope_id, a, b) DO UPDATE SET"
                " weight = excluded.weight, count = excluded.count,"
                " outcome_sum = excluded.outcome_sum, feedback_count = excluded.feedback_count,"
                " updated_at = excluded.updated_at",
                rows,
            )

    def _unless_once_seen(self, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """The rows an import must store: a row that says exactly what its once-seen
        pair says (count 1, weight 1, unrated, its memory's time) stays unstored, and
        a once-seen pair set to anything else is stored and no longer counted."""
        seen = once_seen.pairs_seen_once(
            self, [(int(r[0]), int(r[1]), int(r[2])) for r in rows], self._folded_seq()
        )
        kept, stored = [], set()
        for row in rows:
            key = (int(row[0]), int(row[1]), int(row[2]))
            if key in seen:
                created = seen[key]
                plain = tuple(row[3:7]) == (1.0, 1, 0.0, 0)
                if plain and created is not None and times.to_micros(created) == row[7]:
                    continue
                stored.add(key)
            kept.append(row)
        layers = Counter(layer for layer, _, _ in stored)
        once_seen.count_change(self, {layer: -n for layer, n in layers.items()})
        return kept

    def _pending_written(self, row_ids: Sequence[int]) -> dict[int, str]:
        """When each of the pending rows ``row_ids`` was written."""
        return {
            row_id: times.from_micros(at)
            for row_id, at in self._query_in(
                "SELECT id, at FROM pending_links WHERE id IN (?*)", row_ids
            )
        }

    part = StorePart(
        "links",
        migrations="assocmem.links",
        tables=("links",),  # created with the engine's first tables
        on_init=init_pending_copy,
        before_begin=wait_for_fold,
        on_commit=ask_for_fold,
        on_close=stop_folding,
        on_rollback=drop_pending_copy,
        settle=fold_links,
        on_write=count_written,
        on_forget=uncount_cooccurrence,
        after_forget=drop_uncarried_links,
        on_move=move_links,
        on_merge=merge_links,
        concept_refs=(("links", "a"), ("links", "b")),
        stats=count_links,
        forget_tables=("links",),
        grown_tables=("links",),
    )


# `json.dumps(..., separators=(",", ":"))` without building an encoder for every row.
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def _id_list(ids: Sequence[int]) -> str:
    """Concept ids as the compact JSON array a pending row holds."""
    return _COMPACT.encode(list(ids))


def _with_pending(side: PendingSide, rows: list[tuple[int, float]]) -> dict[int, float]:
    """``{other end: weight}`` of the fetched ``rows`` of a side, each with its pending
    change added."""
    pending = side.pairs
    return {o: w + (p.weight if (p := pending.get(o)) else 0.0) for o, w in rows}


def _bar(weights: Iterable[float], floor: float, limit: int) -> float:
    """The weight a pending pair the fetched rows do not hold must reach to be among
    a side's ``limit`` strongest, given the rows' ``weights`` with their pending
    changes. A pair the query did not return holds below the floor or (the query hit
    its limit) at most the last weight returned, so with no pending change it ranks
    below the limit-th of those; a pending pair joins if it reaches that."""
    ranked = sorted(weights, reverse=True)
    return max(floor, ranked[limit - 1]) if len(ranked) >= limit else floor


def _strongest(
    side: PendingSide, weights: dict[int, float], bar: float, floor: float
) -> dict[int, float]:
    """A concept's strongest links in a layer on one side, at or above ``floor``:
    ``{other end: weight}``, its stored strongest rows with their pending changes
    (``weights``, added to) and the pending pairs of its ``side`` that reach its ``bar``
    (`_bar`). Ties break on the other end's id, so the same links are chosen whether
    their counts are pending or folded."""
    # The pairs are resolved already (`_resolve_pending`). One left unresolved ranks
    # by its pending weight alone, below the bar as its folded weight would leave it.
    for other, weight in side.ranked():
        if weight < bar:
            break
        weights.setdefault(other, weight)
    return {other: w for other, w in weights.items() if w >= floor}


def _overcounts(store: SQLStore, merged: Mapping[int, int]) -> Counter[tuple[int, int, int]]:
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


def _uncount_overcounts(store: SQLStore, extra: Counter[tuple[int, int, int]]) -> None:
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
        f" updated_at = {later('links')}"
    )
    store._conn.execute(
        "DELETE FROM links WHERE a IN (SELECT old_id FROM refold_map)"
        " OR b IN (SELECT old_id FROM refold_map)"
    )


def _store_once_seen(store: LinkQueries, concepts: Sequence[int]) -> None:
    """Give every once-seen pair with an end in ``concepts``, in any layer, its row
    (`once_seen`): a merge re-keys and sums rows, and two once-seen pairs it joins
    are one pair counted twice."""
    layers = [layer for (layer,) in store._query("SELECT id FROM scopes ORDER BY id")]
    if not layers or not concepts:
        return
    seen = once_seen.pairs_around(store, layers, concepts, store._folded_seq())
    store._conn.executemany(
        "INSERT INTO links (scope_id, a, b, weight, count, updated_at) VALUES (?,?,?,1,1,?)",
        [(layer, a, b, times.to_micros(at)) for (layer, a, b), at in sorted(seen.items())],
    )
    stored = Counter(layer for layer, _, _ in seen)
    once_seen.count_change(store, {layer: -n for layer, n in stored.items()})


def _add_seen(
    found: dict[tuple[int, int], LinkRow], seen: Mapping[tuple[int, int, int], str | None]
) -> None:
    """Add once-seen pairs ``{(layer, a, b): created_at}`` to the rows ``found`` summed
    over layers: each counts 1 to its pair's weight and count."""
    for (_, a, b), created in seen.items():
        row = found.get((a, b)) or LinkRow(a, b, 0.0, 0, 0.0, 0, "")
        at = times.from_micros(times.to_micros(created)) if created else ""
        found[(a, b)] = replace(
            row, weight=row.weight + 1.0, count=row.count + 1, updated_at=max(row.updated_at, at)
        )
