"""The store under two hostile patterns:

- race: each write that takes a memory id (and a few reads) races ``forget`` of that
  memory, one round per fresh memory, from two `Memory` objects on the same store.
  Counted: errors outside the `AssocmemError` tree (untyped), rows the forgotten
  memory left in the tables that reference it, and memories still present after
  ``forget`` reported them deleted (resurrected). All three must stay 0. A forget
  that reports none deleted (``deleted_none``: the race moved the memory out of its
  caller's view first, as an access change does) is counted apart, and so is a round
  whose leftover rows cannot be told apart: SQLite gives the next memory the highest
  free sequence number, so a write committed after the forget (a derived note whose
  parent check came first) may take the forgotten memory's number.
- wal: a raw ``sqlite3`` reader holds one snapshot while batches of ``write_many`` go
  on: the batches written, those refused (`StoreBusy`) once the WAL the snapshot pins
  reaches its ceiling, the peak WAL size, whether the reader's view stayed the same,
  and the WAL left once the reader lets go.

The tables are read directly (a second connection beside the library), since what a
race leaves behind is what the library's own reads would not show.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from assocmem import AssocmemError, Memory, NotFound, StoreBusy
from assocmem.store.sqlite import SQLiteStore

from .stores import Stores

Operation = Callable[[Memory, str], object]

# Each operation that takes a memory id, as it races a forget of that memory.
OPERATIONS: Mapping[str, Operation] = {
    "update": lambda m, i: m.update(i, tags=["upd"], value=2.0),
    "update_access": lambda m, i: m.update(i, access=["ops"]),
    "archive": lambda m, i: m.archive([i]),
    "restore": lambda m, i: m.restore([i]),
    "protect": lambda m, i: m.protect([i]),
    "feedback": lambda m, i: m.feedback([i], 0.5, query_concepts=["alpha"]),
    "credit": lambda m, i: m.credit([i], "good"),
    "declare": lambda m, i: m.declare({"entities": [{"name": "Ent"}]}, anchor_ref=f"mem:{i}"),
    "derived": lambda m, i: m.write("derived note", concepts=["gamma"], derived_from=[i]),
    "slash": lambda m, i: m.slash([i], scope="memory"),
    "spend": lambda m, i: m.spend_irreversible([i], 1.0, 100.0),
    "ungraduate": lambda m, i: m.ungraduate([i]),
    "lift": lambda m, i: m.restore([i], scope="memory"),
    "retract": lambda m, i: m.retract(mentions=[("Ent", f"mem:{i}")]),
    "get": lambda m, i: m.get([i]),
    "inspect": lambda m, i: m.inspect(i),
    "standing": lambda m, i: m.standing([i]),
}
# The tables holding rows that name a memory by its sequence number (table, column):
# a forget must leave none behind. An allow-list: the only identifiers put into SQL.
TRACES = (
    ("memory_concepts", "memory_seq"), ("vectors", "memory_seq"),
    ("entity_mentions", "memory_seq"), ("relations", "anchor_seq"),
    ("feedback_items", "memory_seq"), ("lessons", "memory_seq"),
    ("trust_credits", "memory_seq"), ("trust_taint", "memory_seq"),
    ("trust_slashes", "memory_seq"), ("trust_attestations", "memory_seq"),
    ("consolidation_hubs", "memory_seq"), ("graduations", "memory_seq"),
)  # fmt: skip
# Both sides of a round start together; neither waits longer than this for the other.
BARRIER_TIMEOUT_S = 60.0
# Memories per batch of the WAL part, each about 300 bytes of text (as in the probe
# this bench replaces: enough that a few seconds of batches pass 100 MB of WAL).
BATCH = 20
PADDING = "padding words " * 20
# Once the reader lets go: the pace of single writes, and how long they may take to
# bring the WAL back within its limit (a few of the writer's `wal_retry_s`).
RELEASE_PACE_S = 0.1
RELEASE_WAIT_S = 5.0


class Rows:
    """Reads a store's tables over a connection of its own, in autocommit, so each
    read sees the latest commit and holds no snapshot afterwards."""

    def __init__(self, target: str, backend: str) -> None:
        if backend == "sqlite":
            self._conn: Any = sqlite3.connect(target, isolation_level=None)
            self._mark = "?"
        else:
            import psycopg

            self._conn = psycopg.connect(target, autocommit=True)
            self._mark = "%s"

    def _one(self, sql: str, value: object) -> Any:
        rows = self._conn.execute(sql.replace("?", self._mark), (value,)).fetchall()
        return rows[0][0] if rows else None

    def seq(self, memory_id: str) -> int | None:
        """The memory's sequence number, or None once it is gone."""
        seq = self._one("SELECT seq FROM memories WHERE id = ?", memory_id)
        return None if seq is None else int(seq)

    def taken(self, seq: int) -> bool:
        """Whether a memory holds the sequence number ``seq`` now."""
        return bool(self._one("SELECT COUNT(*) FROM memories WHERE seq = ?", seq))

    def traces(self, seq: int) -> dict[str, int]:
        """Rows still naming ``seq``, per table that has any."""
        counts = {
            table: int(self._one(f"SELECT COUNT(*) FROM {table} WHERE {column} = ?", seq))
            for table, column in TRACES
        }
        return {table: n for table, n in counts.items() if n}

    def close(self) -> None:
        self._conn.close()


def _outcome(call: Callable[[], object], samples: dict[str, str]) -> str:
    """``ok``, ``not_found``, ``typed:<class>`` (another `AssocmemError`) or
    ``untyped:<class>``; the first of each error kind is kept in ``samples``, with
    the place it was raised from."""
    try:
        call()
    except NotFound:
        return "not_found"
    except Exception as exc:  # what the race is looking for: anything outside the tree
        tree = "typed" if isinstance(exc, AssocmemError) else "untyped"
        kind = f"{tree}:{type(exc).__name__}"
        samples.setdefault(kind, _described(exc))
        return kind
    return "ok"


def _described(exc: Exception) -> str:
    """The error's message and the innermost line it was raised from."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return repr(str(exc)[:300])
    place = "/".join(Path(frames[-1].filename).parts[-3:])  # e.g. assocmem/store/x.py
    return f"{str(exc)[:300]!r} at {place}:{frames[-1].lineno} in {frames[-1].name}"


def _race(calls: Mapping[str, Callable[[], object]]) -> tuple[dict[str, str], dict[str, str]]:
    """Run the two ``calls`` at once, released together: each one's outcome, and the
    first message of each error kind, keyed ``<call>:<kind>``."""
    barrier = threading.Barrier(len(calls), timeout=BARRIER_TIMEOUT_S)
    outcomes: dict[str, str] = {}
    samples: dict[str, str] = {}

    def side(name: str, call: Callable[[], object]) -> None:
        barrier.wait()
        seen: dict[str, str] = {}
        outcomes[name] = _outcome(call, seen)
        samples.update({f"{name}:{kind}": text for kind, text in seen.items()})

    threads = [threading.Thread(target=side, args=item) for item in calls.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes, samples


def _fresh(mem: Memory, text: str) -> str:
    """The id of a new memory of ``text`` (each text is unique, so none is skipped)."""
    memory_id = mem.write(text, concepts=["alpha", "beta"]).id
    if memory_id is None:
        raise RuntimeError(f"the write of {text!r} was skipped as a duplicate")
    return memory_id


def _forget(mem: Memory, memory_id: str, deleted: list[int]) -> None:
    """Forget one memory, keeping how many ``forget`` reported deleted: 0 where the
    memory left the caller's view between its lookup and its delete."""
    deleted.append(mem.forget([memory_id]))


def _race_operation(
    name: str, pair: tuple[Memory, Memory], rows: Rows, rounds: int, tick: Callable[[], object]
) -> dict[str, Any]:
    """``rounds`` races of operation ``name`` against forget, a fresh memory each."""
    acting, forgetting = pair
    operation = OPERATIONS[name]
    ops, forgets, leftover = Counter[str](), Counter[str](), Counter[str]()
    samples: dict[str, str] = {}
    resurrected = reused = 0
    for round_ in range(rounds):
        memory_id = _fresh(acting, f"note {name} {round_} alpha beta")
        seq, deleted = rows.seq(memory_id), list[int]()
        outcomes, seen = _race({
            "operation": partial(operation, acting, memory_id),
            "forget": partial(_forget, forgetting, memory_id, deleted),
        })  # fmt: skip
        if outcomes["forget"] == "ok":
            outcomes["forget"] = "deleted" if deleted[0] else "deleted_none"
        ops[outcomes["operation"]] += 1
        forgets[outcomes["forget"]] += 1
        for kind, text in seen.items():
            samples.setdefault(kind, text)
        if rows.seq(memory_id) is not None:
            resurrected += outcomes["forget"] == "deleted"
        elif seq is not None and rows.taken(seq):
            reused += 1  # a write that committed after the forget took its number
        elif seq is not None:
            leftover.update(rows.traces(seq))
        tick()
    untyped = sum(n for kind, n in (ops + forgets).items() if kind.startswith("untyped:"))
    return {
        "operation": dict(sorted(ops.items())),
        "forget": dict(sorted(forgets.items())),
        "untyped_errors": untyped,
        "leftover_rows": dict(sorted(leftover.items())),
        "resurrected": resurrected,
        "unchecked_seq_reused": reused,
        "error_samples": samples,
    }


def race(stores: Stores, rounds: int, tick: Callable[[], object]) -> dict[str, Any]:
    """Every operation of `OPERATIONS` raced against forget ``rounds`` times on a fresh
    store of ``stores``; ``tick()`` after each round."""
    target = stores.new("hardening-race")
    started = time.perf_counter()
    rows = Rows(target, stores.backend)
    acting, forgetting = Memory(target, agent_id="ops"), Memory(target, agent_id="ops")
    try:
        operations = {
            name: _race_operation(name, (acting, forgetting), rows, rounds, tick)
            for name in OPERATIONS
        }
    finally:
        acting.close()
        forgetting.close()
        rows.close()
    return {
        "measured": "each id-taking operation raced against forget of the same memory:"
        " untyped errors, rows left naming a forgotten memory, memories present after"
        " forget reported them deleted",
        "rounds_per_operation": rounds,
        "races": rounds * len(OPERATIONS),
        "untyped_errors": sum(o["untyped_errors"] for o in operations.values()),
        "leftover_rows": sum(sum(o["leftover_rows"].values()) for o in operations.values()),
        "resurrected": sum(o["resurrected"] for o in operations.values()),
        "forget_deleted_none": sum(o["forget"].get("deleted_none", 0) for o in operations.values()),
        "unchecked_seq_reused": sum(o["unchecked_seq_reused"] for o in operations.values()),
        "seconds": round(time.perf_counter() - started, 1),
        "operations": operations,
    }


def _wal_bytes(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return wal.stat().st_size if wal.exists() else 0


def _batch(number: int) -> list[dict[str, Any]]:
    return [
        {"text": f"note {number}-{i} {PADDING}", "concepts": [f"c{number}", f"d{i}"]}
        for i in range(BATCH)
    ]


def wal_under_snapshot(folder: Path, seconds: float) -> dict[str, Any]:
    """Batches written for ``seconds`` while a raw reader holds one snapshot of the file.
    A refused batch waits `SQLiteStore.wal_wait_s` first, so the part may overrun
    ``seconds`` by that much."""
    path = folder / "wal.db"
    written = refused = peak = 0
    errors = Counter[str]()
    with Memory(str(path), agent_id="wal") as mem:
        mem.write("first", concepts=["first"])
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        before = reader.execute("SELECT COUNT(*) FROM memories").fetchall()
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            try:
                mem.write_many(_batch(written))
                written += 1
            except StoreBusy:
                refused += 1
            except AssocmemError as exc:
                errors[type(exc).__name__] += 1
            peak = max(peak, _wal_bytes(path))
        elapsed = time.monotonic() - started
        consistent = reader.execute("SELECT COUNT(*) FROM memories").fetchall() == before
        reader.execute("COMMIT")
        reader.close()
        after, writes, released = _after_release(mem, path)
    return {
        "measured": "write_many batches while a raw sqlite3 reader holds one snapshot:"
        " written, refused (StoreBusy), peak WAL bytes, and once the reader ends, the"
        " WAL bytes when single writes have brought it back within its limit",
        "seconds": round(elapsed, 1),
        "memories_per_batch": BATCH,
        "batches_written": written,
        "batches_refused": refused,
        "other_errors": dict(errors),
        "wal_ceiling_bytes": SQLiteStore.wal_ceiling_bytes,
        "wal_wait_s": SQLiteStore.wal_wait_s,
        "wal_limit_bytes": SQLiteStore.wal_limit_bytes,
        "peak_wal_bytes": peak,
        "reader_view_unchanged": consistent,
        "wal_after_release_bytes": after,
        "writes_after_release": writes,
        "wal_shrunk_after_s": released,
    }


def _after_release(mem: Memory, path: Path) -> tuple[int, int, float | None]:
    """Single writes, `RELEASE_PACE_S` apart, until the WAL is back within
    `SQLiteStore.wal_limit_bytes` (the checkpoint that lets it restart and the
    truncating retry each come with a later commit): its size then, the writes made,
    and the seconds it took (None: still over after `RELEASE_WAIT_S`)."""
    started, writes = time.monotonic(), 0
    while time.monotonic() - started < RELEASE_WAIT_S:
        mem.write(f"after {writes}", concepts=["after"])
        writes += 1
        if _wal_bytes(path) <= SQLiteStore.wal_limit_bytes:
            return _wal_bytes(path), writes, round(time.monotonic() - started, 2)
        time.sleep(RELEASE_PACE_S)
    return _wal_bytes(path), writes, None
