"""Visibility-map upkeep off the writer's path (PostgreSQL).

A read's concept walks answer from two indexes alone (the postings' primary key,
and `memories_visible_by_seq` for the view's columns), but only on pages the
visibility map marks all-visible; on others each of a walk's several hundred
index entries costs a visit to the heap as well. Only VACUUM sets those marks.
Autovacuum does, but on its own timer (a minute by default), so for that long
after a bulk write every walk pays the heap visits: measured on a fresh 10k
store, concept reads at 1.84-1.89x SQLite's p50 before a VACUUM and 1.63-1.74x
after it.

Here a thread with its own connection vacuums the walked tables once a writer of
this process has added as many rows as autovacuum's own insert trigger asks for
(its default threshold and scale factor), without waiting for the timer. VACUUM
takes no lock a read or a write waits for, and one that finds a table locked
(autovacuum at work, a forget's VACUUM FULL) skips it.

`close` lets a VACUUM in progress finish, as SQLite's last close finishes its
checkpoint: a process that writes in bulk and exits is the usual case, and its
reads would otherwise wait for autovacuum after all. One VACUUM visits only the
pages written since the last (a fifth of the table at most, past the first
thousand rows): 0.05 s on a fresh 10k store.

Invariants: the thread never writes rows; a failed VACUUM is left to autovacuum;
one runs at most `TIMEOUT`; `close` returns once the thread has ended.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import psycopg

log = logging.getLogger("assocmem.store")

# The tables whose index-only scans a read's walks depend on.
WALKED_TABLES = ("memories", "memory_concepts")
# Autovacuum's defaults for a vacuum after inserts (autovacuum_vacuum_insert_threshold
# and autovacuum_vacuum_insert_scale_factor): rows added since the last one, at least
# this many and this share of the table. Each VACUUM visits the pages not yet marked,
# so their total work stays proportional to what was written.
INSERT_THRESHOLD = 1000
INSERT_SHARE = 0.2
# The longest a VACUUM may run (and `close` wait for it) before it is left to autovacuum.
TIMEOUT = "60s"


class Vacuumer:
    """Counts the rows a store's writer adds (`added`) and, past autovacuum's insert
    trigger, wakes a daemon thread that runs one VACUUM of `WALKED_TABLES`."""

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]], rows: int) -> None:
        self._connect = connect
        self._rows = rows  # in the table when the last VACUUM was asked for
        self._added = 0
        self._wake = threading.Event()
        self._asked = False  # a VACUUM was asked for and has not started
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def added(self, rows: int) -> None:
        """A committed write added ``rows`` memories: vacuum once they are enough."""
        self._added += rows
        if self._added < INSERT_THRESHOLD + INSERT_SHARE * self._rows:
            return
        self._rows += self._added
        self._added = 0
        with self._lock:
            if self._stopping.is_set():
                return
            if self._thread is None:  # started by the first write that needs it
                self._thread = threading.Thread(
                    target=self._run, name="assocmem-vacuum", daemon=True
                )
                self._thread.start()
            self._asked = True
        self._wake.set()

    def close(self) -> None:
        with self._lock:
            self._stopping.set()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            self._wake.set()
            thread.join()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()  # before reading what was asked: a later ask wakes again
            if self._asked:
                self._asked = False
                self._vacuum()
            if self._stopping.is_set() and not self._asked:
                return

    def _vacuum(self) -> None:
        try:
            with self._connect() as conn:
                conn.execute(f"SET statement_timeout = '{TIMEOUT}'")
                conn.execute("VACUUM (SKIP_LOCKED) " + ", ".join(WALKED_TABLES))
        except psycopg.Error as exc:  # left to autovacuum
            log.debug("store (PostgreSQL): vacuum skipped: %s", exc)
