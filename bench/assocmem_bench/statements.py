"""The statements behind one write and one read, traced on a real SQLite store.

Counts what `sqlite3.set_trace_callback` sees on the memory's own connection (lines
SQLite marks ``--``, run inside triggers and FTS, are left out): a write declaring two
entities and a relation, and a text read on a store of ``memories`` notes. Figures are
counts, not times, so they compare across machines and runs. Runs against any
checkout of the package: ``python -m assocmem_bench.statements OUT``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assocmem import Memory
from assocmem.progress import bar as progress_bar

from .measure import sqlite_connection

DECLARING_WRITE = {
    "text": "Kirari patched the MizEye driver.",
    "associations": {
        "entities": [{"name": "MizEye", "aliases": ["camera rig"]}, "Kirari"],
        "relations": [{"subject": "Kirari", "predicate": "maintains", "object": "MizEye"}],
    },
}
QUESTION = "why did the deploy time out on host h12?"


def _traced(mem: Memory, call: Callable[[], object]) -> dict[str, Any]:
    log: list[str] = []
    conn = sqlite_connection(mem)
    conn.set_trace_callback(lambda s: None if s.lstrip().startswith("--") else log.append(s))
    try:
        call()
    finally:
        conn.set_trace_callback(None)
    verbs = Counter(s.split()[0].upper() for s in log if s.split())
    return {
        "statements": len(log),
        "write_transactions": sum(s.strip().upper().startswith("BEGIN IMMEDIATE") for s in log),
        "pragma_data_version": sum("data_version" in s for s in log),
        "writes": sum(verbs[v] for v in ("INSERT", "UPDATE", "DELETE")),
        "by_verb": dict(verbs.most_common()),
    }


def run(out: str, memories: int = 1000) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory(prefix="assocmem-statements-") as folder,
        progress_bar(3, desc="statements bench", unit="step") as bar,
    ):
        with Memory(str(Path(folder) / "trace.db"), agent_id="bench") as mem:
            mem.write("an earlier note about the deploy")  # the scope's layer exists
            write = _traced(mem, lambda: mem.write(**DECLARING_WRITE))
            bar.update(1)
            mem.write_many([
                {"text": f"note {i}: the deploy timed out after {i} retries on host h{i % 37}"}
                for i in range(memories)
            ])  # fmt: skip
            bar.update(1)
            mem.read("why did the deploy time out?")  # warm: statistics and caches
            read = _traced(mem, lambda: mem.read(QUESTION))
            bar.update(1)
    report = {
        "benchmark": "statements",
        "declaring_write": write,
        "text_read": {"memories": memories, **read},
    }
    Path(out).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1] if len(sys.argv) > 1 else "bench-statements.json"), indent=2))
