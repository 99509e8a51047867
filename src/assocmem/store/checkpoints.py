"""WAL checkpoints off the writer's path.

A checkpoint copies the WAL's pages back into the database file, and at
``synchronous = NORMAL`` it is also where both files are synced, and the fsyncs,
not the copy, are most of its time. SQLite runs it inside the commit that crosses
its threshold, so about one single write in 150 waited for it, and those waits were
a large share of single writes' time.

Here a thread with its own connection runs PASSIVE checkpoints, which neither
wait for nor block readers and the writer, while the writer goes on. The writer
keeps SQLite's own checkpoint as a backstop at `BACKSTOP_PAGES`: only a
checkpoint in the writer's own commit lets the WAL restart from its beginning
during a stream of writes (a background one always leaves the frames committed
while it ran), and it then finds little left to copy or sync. The thread also
bounds how far a crash or power loss can reach back: it syncs the WAL at most
`PACE_S` after a commit. No checkpoint can copy the frames a reader's old
snapshot still needs; the store's WAL ceiling bounds those (store/sqlite.py).

Invariants: the thread never writes rows and never holds a lock a commit waits
for (only the store's own truncating checkpoints may wait, briefly, for its
checkpoint to end); if it stops or falls behind, the backstop bounds the WAL as
before; `close` returns only once its connection is closed.
"""

from __future__ import annotations

import sqlite3
import threading

# Checkpoints at most this often while commits arrive: each costs two fsyncs, and
# ten a second keep the WAL to a tenth of a second of writes without making the
# disk sync what it would only rewrite moments later.
PACE_S = 0.1
# The writer's own checkpoint, when the background ones fell this far behind or a
# stream of writes never let the WAL restart (48 MiB of 4 KiB pages: under the
# store's 64 MiB WAL limit, so the limit's truncating checkpoint stays a rarity).
BACKSTOP_PAGES = 12_000
# A checkpoint that must happen (a forget's scrub) and found another one running
# tries again after this long: one copying a pace's worth of frames takes a few ms.
CHECKPOINT_RETRY_S = 0.002
# How long a checkpoint that need not wait (the writer's, once the WAL is over its
# limit) keeps trying: longer than one background checkpoint of a pace's frames
# takes, fsyncs included.
CHECKPOINT_BRIEF_S = 0.05


class Checkpointer:
    """A daemon thread that checkpoints the WAL of the database at ``path`` soon
    after commits (`committed`) and stops at `close`."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"assocmem-checkpoint:{path}", daemon=True
        )
        self._thread.start()

    def committed(self) -> None:
        """A commit added frames to the WAL: checkpoint them soon."""
        self._wake.set()

    def close(self) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=True)
        except sqlite3.Error:
            return  # the writer's backstop checkpoints alone
        try:
            while True:
                self._wake.wait()
                if self._stopping.is_set():
                    return
                self._wake.clear()
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error:
                    pass  # another checkpoint holds the lock; the next commit wakes us
                if self._stopping.wait(PACE_S):
                    return
        finally:
            conn.close()
