"""Ingest benchmark: `write_many` against raw inserts of the same rows into the same schema.

The workload is scale's (`scale.workload`: 8 Zipf-drawn words a memory, text alone,
so assocmem extracts the concepts itself), written into a fresh SQLite store in
batches. The raw side is what that ingest would cost with assocmem's own work
taken out: a first, untimed fill records after each batch the rows each table
gained, changed or lost (memories, concepts, memory_concepts, pending link counts,
the links a fold wrote, the scope...), and a raw run replays exactly those rows into
a fresh store of the same schema with plain ``sqlite3`` ``executemany``, one
transaction a batch, on a connection set up as the store sets up its own. Tables
the schema's triggers fill (the FTS index, lexical counts) are left to those
triggers on both sides, so the raw store ends up holding the same rows.

A write_many run ends when the last fold its writes made due is applied: the
store's fold worker (a process beside the writer, `links/folding.py`) applies it,
and its CPU seconds count in the run's. The capture waits for that fold too, so the
raw side replays every row the fill wrote.

Runs alternate (write_many, raw, write_many, ...) in fresh stores and the report
gives each side's median memories/s and the ratio of the medians, by wall time and
by CPU time; one more write_many fill runs under cProfile for the breakdown of
where its time goes (the writer's process alone).
"""

from __future__ import annotations

import cProfile
import json
import pstats
import re
import resource
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from assocmem import Memory
from assocmem.progress import bar as progress_bar

from .measure import environment, sqlite_connection
from .scale import AGENT, workload

MEMORIES = 10_000
BATCH = 500
ROUNDS = 3
TOP_FUNCTIONS = 20
# The store's connection settings the raw connection copies (journal_mode is in the file).
CONNECTION_PRAGMAS = ("synchronous", "temp_store", "cache_size", "mmap_size", "secure_delete")
_TRIGGER_TARGET = re.compile(r"\bINTO\s+(\w+)", re.IGNORECASE)


@dataclass
class TableChange:
    """What one batch did to one table: rows new or changed (whole rows), keys gone."""

    columns: tuple[str, ...]
    key: tuple[str, ...]
    inserted: list[tuple[Any, ...]] = field(default_factory=list)
    replaced: list[tuple[Any, ...]] = field(default_factory=list)
    deleted: list[tuple[Any, ...]] = field(default_factory=list)


Batch = dict[str, TableChange]


def items(memories: int) -> list[dict[str, Any]]:
    """The write dicts of the workload's first ``memories`` texts."""
    _, texts = workload(0)
    return [{"text": text} for text in islice(texts, memories)]


def batches(written: Sequence[dict[str, Any]], size: int) -> Iterator[Sequence[dict[str, Any]]]:
    for start in range(0, len(written), size):
        yield written[start : start + size]


def run(
    out: str, memories: int = MEMORIES, batch: int = BATCH, rounds: int = ROUNDS
) -> dict[str, Any]:
    """Time `write_many` and the raw replay of its rows, ``rounds`` times each, alternating."""
    written = items(memories)
    with tempfile.TemporaryDirectory(prefix="assocmem-ingest-") as folder:
        root = Path(folder)
        with progress_bar(2 * rounds + 2, desc="ingest bench", unit="fill") as bar:
            changes, pragmas = capture(root / "captured.db", written, batch)
            bar.update(1)
            assocmem_s, raw_s = [], []
            for round_ in range(rounds):
                assocmem_s.append(fill(root / f"assocmem-{round_}.db", written, batch))
                bar.update(1)
                raw_s.append(replay(root / f"raw-{round_}.db", changes, pragmas))
                bar.update(1)
            differing = differences(root / "captured.db", root / f"raw-{rounds - 1}.db", changes)
            profile = profiled(root / "profiled.db", written, batch)
            bar.update(1)
    wall, cpu = _ratio(assocmem_s, raw_s, 0), _ratio(assocmem_s, raw_s, 1)
    report = {
        "benchmark": "ingest",
        "memories": memories,
        "batch": batch,
        "rounds": rounds,
        "write_many": _rates(memories, assocmem_s),
        "raw": {**_rates(memories, raw_s), "rows": _row_counts(changes)},
        "ratio": wall,
        "cpu_ratio": cpu,
        "raw_rows_differing": differing,
        "write_many_profile": profile,
        "environment": environment(backend="sqlite", connection=pragmas),
    }
    Path(out).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


def _rates(memories: int, timed: Sequence[tuple[float, float]]) -> dict[str, Any]:
    return {
        "per_s": round(memories / statistics.median(wall for wall, _ in timed), 1),
        "seconds": [round(wall, 3) for wall, _ in timed],
        "cpu_seconds": [round(cpu, 3) for _, cpu in timed],
    }


def _ratio(
    assocmem: Sequence[tuple[float, float]], raw: Sequence[tuple[float, float]], part: int
) -> float:
    """write_many's rate over raw's, by the medians of wall (0) or CPU (1) seconds: the
    CPU time (the fold worker's included) is what a busy machine's other work disturbs
    least, and what the writer's work costs whichever core it runs on."""
    return round(
        statistics.median(t[part] for t in raw) / statistics.median(t[part] for t in assocmem), 3
    )


def _row_counts(changes: Sequence[Batch]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for batch in changes:
        for table, change in batch.items():
            seen = counts.setdefault(table, {"inserted": 0, "replaced": 0, "deleted": 0})
            seen["inserted"] += len(change.inserted)
            seen["replaced"] += len(change.replaced)
            seen["deleted"] += len(change.deleted)
    return {table: counts[table] for table in sorted(counts)}


def fill(path: Path, written: Sequence[dict[str, Any]], batch: int) -> tuple[float, float]:
    """Wall and CPU seconds `write_many` takes to store ``written`` in batches into a
    fresh store, until the last fold it made due is applied: the CPU seconds count
    the store's fold worker's too (a process of its own, counted once it ended)."""
    cpu = time.process_time() + _children_cpu()
    with Memory(str(path), agent_id=AGENT) as mem:
        started = time.perf_counter()
        for part in batches(written, batch):
            mem.write_many(part)
        mem._store.finish_folds()
        wall = time.perf_counter() - started
    return wall, time.process_time() + _children_cpu() - cpu


def _children_cpu() -> float:
    """CPU seconds of this process's children that ended and were waited for."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def profiled(path: Path, written: Sequence[dict[str, Any]], batch: int) -> list[dict[str, Any]]:
    """The top functions of one `write_many` fill by their own time, under cProfile."""
    profile = cProfile.Profile()
    with Memory(str(path), agent_id=AGENT) as mem:
        profile.enable()
        for part in batches(written, batch):
            mem.write_many(part)
        profile.disable()
    stats: Any = pstats.Stats(profile).stats  # {(file, line, name): (cc, calls, own, cum, _)}
    total = sum(own for _, _, own, _, _ in stats.values())
    rows = sorted(stats.items(), key=lambda item: item[1][2], reverse=True)[:TOP_FUNCTIONS]
    return [
        {
            "function": _where(where),
            "calls": calls,
            "own_s": round(own, 3),
            "cumulative_s": round(cumulative, 3),
            "own_share": round(own / total, 3),
        }
        for where, (_, calls, own, cumulative, _) in rows
    ]


def _where(where: tuple[str, int, str]) -> str:
    file, line, name = where
    if file == "~":  # a builtin
        return name
    parts = Path(file).parts
    short = "/".join(parts[parts.index("assocmem") :]) if "assocmem" in parts else parts[-1]
    return f"{short}:{line}({name})"


# -- the raw side ---------------------------------------------------------------


def capture(path: Path, written: Sequence[dict[str, Any]], batch: int) -> tuple[list[Batch], dict]:
    """Fill a store with `write_many` and return what each batch changed, table by table,
    and the store connection's settings."""
    with Memory(str(path), agent_id=AGENT) as mem:
        conn = sqlite_connection(mem)
        pragmas = {
            name: conn.execute(f"PRAGMA {name}").fetchone()[0] for name in CONNECTION_PRAGMAS
        }
        tables = replayed_tables(conn)
        before = {table: _snapshot(conn, table) for table in tables}
        changes = []
        for number, part in enumerate(batches(written, batch), start=1):
            mem.write_many(part)
            if number * batch >= len(written):  # the last: its folds applied, as `fill`'s
                mem._store.finish_folds()
            after = {table: _snapshot(conn, table) for table in tables}
            changes.append(
                {
                    table: change
                    for table in tables
                    if (change := _change(conn, table, before[table], after[table]))
                }
            )
            before = after
    return changes, pragmas


def replayed_tables(conn: sqlite3.Connection) -> list[str]:
    """The ordinary tables a replay writes: not SQLite's own, not a virtual table or its
    shadow tables, and not a table the schema's triggers fill."""
    rows = conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
    virtual = [
        name for _, name, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL TABLE")
    ]
    triggered = {
        t for kind, _, sql in rows if kind == "trigger" for t in _TRIGGER_TARGET.findall(sql)
    }
    return sorted(
        name
        for kind, name, sql in rows
        if kind == "table"
        and not name.startswith("sqlite_")
        and name not in virtual
        and not any(name.startswith(f"{v}_") for v in virtual)
        and name not in triggered
    )


def _columns(conn: sqlite3.Connection, table: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
    columns = tuple(row[1] for row in info)
    key = tuple(row[1] for row in sorted(info, key=lambda row: row[5]) if row[5])
    return columns, key


def _snapshot(conn: sqlite3.Connection, table: str) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """Every row of ``table`` by its primary key (its rowid where it declares none)."""
    columns, key = _columns(conn, table)
    select = ", ".join(f'"{c}"' for c in columns)
    if key:
        at = [columns.index(k) for k in key]
        rows = conn.execute(f'SELECT {select} FROM "{table}"').fetchall()
        return {tuple(row[i] for i in at): row for row in rows}
    return {(row[0],): row[1:] for row in conn.execute(f'SELECT rowid, {select} FROM "{table}"')}


def _change(
    conn: sqlite3.Connection,
    table: str,
    before: dict[tuple[Any, ...], tuple[Any, ...]],
    after: dict[tuple[Any, ...], tuple[Any, ...]],
) -> TableChange | None:
    columns, key = _columns(conn, table)
    change = TableChange(columns, key or ("rowid",))
    for row_key, row in after.items():
        old = before.get(row_key)
        if old is None:
            change.inserted.append(row if key else (*row_key, *row))
        elif old != row:
            change.replaced.append(row if key else (*row_key, *row))
    change.deleted = [row_key for row_key in before if row_key not in after]
    if not (change.inserted or change.replaced or change.deleted):
        return None
    if not key:
        change.columns = ("rowid", *columns)
    return change


def replay(path: Path, changes: Sequence[Batch], pragmas: dict[str, Any]) -> tuple[float, float]:
    """Wall and CPU seconds plain sqlite3 takes to write ``changes`` into a fresh store of the same
    schema, one transaction a batch, each table's rows in one executemany a statement."""
    Memory(str(path), agent_id=AGENT).close()  # the schema, migrated, and nothing else
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        for name, value in pragmas.items():
            conn.execute(f"PRAGMA {name} = {int(value)}")
        started, cpu = time.perf_counter(), time.process_time()
        for batch in changes:
            conn.execute("BEGIN IMMEDIATE")
            for table, change in batch.items():
                _apply(conn, table, change)
            conn.execute("COMMIT")
        return time.perf_counter() - started, time.process_time() - cpu
    finally:
        conn.close()


def _apply(conn: sqlite3.Connection, table: str, change: TableChange) -> None:
    if change.deleted:
        where = " AND ".join(f'"{k}" = ?' for k in change.key)
        conn.executemany(f'DELETE FROM "{table}" WHERE {where}', change.deleted)
    names = ", ".join(f'"{c}"' for c in change.columns)
    values = ", ".join("?" * len(change.columns))
    if change.inserted:
        conn.executemany(f'INSERT INTO "{table}" ({names}) VALUES ({values})', change.inserted)
    if change.replaced:
        conn.executemany(
            f'INSERT OR REPLACE INTO "{table}" ({names}) VALUES ({values})', change.replaced
        )


def differences(expected: Path, actual: Path, changes: Sequence[Batch]) -> dict[str, int]:
    """Rows by which two stores differ, per differing table: the tables ``changes`` wrote
    and those the schema's triggers fill (the FTS index by what it matches)."""
    found: dict[str, int] = {}
    with sqlite3.connect(str(expected)) as a, sqlite3.connect(str(actual)) as b:
        triggered = {
            t for (sql,) in a.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'")
            for t in _TRIGGER_TARGET.findall(sql)
        }  # fmt: skip
        for table in sorted({*(t for batch in changes for t in batch), *triggered}):
            left, right = _rows(a, table), _rows(b, table)
            if left != right:
                found[table] = len(left ^ right)
    return found


def _rows(conn: sqlite3.Connection, table: str) -> set[tuple[Any, ...]]:
    if table == "memories_fts":  # external content: its own rows are the index's shadow tables
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_terms"
            " USING fts5vocab(main, memories_fts, row)"
        )
        terms = set(conn.execute("SELECT term, doc, cnt FROM temp.fts_terms"))
        return terms | set(conn.execute("SELECT * FROM memories_fts_docsize"))
    return set(conn.execute(f'SELECT * FROM "{table}"'))
