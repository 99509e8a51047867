"""The statements behind one write and one read, traced on a real SQLite store.

Counts what `sqlite3.set_trace_callback` sees on the memory's own connection (lines
SQLite marks ``--``, run inside triggers and FTS, are left out): a write declaring two
entities and a relation, and a text read on a store of ``memories`` notes: once on a store
unchanged since the last read, once just after a write, and once with an embedder and
lessons taught by feedback. Figures are counts, not times, so they compare across
machines and runs. Runs against any
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
from assocmem.vectors.embedders import Embedder, load_embedder

from .measure import sqlite_connection

DECLARING_WRITE = {
    "text": "Kirari patched the MizEye driver.",
    "associations": {
        "entities": [{"name": "MizEye", "aliases": ["camera rig"]}, "Kirari"],
        "relations": [{"subject": "Kirari", "predicate": "maintains", "object": "MizEye"}],
    },
}
QUESTION = "why did the deploy time out on host h12?"
# Earlier questions, and which of their results (by rank) was rated helpful.
TAUGHT = (("which host timed out after 12 retries?", 2), ("what retried on host h3?", 1))
# More rated questions, so that enough words are taught for the arm that reads a
# question's unknown words by meaning (`links.meanings`), and a question in words
# none of the notes use.
TAUGHT_MORE = (
    ("did the nightly deploy time out again on host h7?", 0),
    ("how many retries before host h20 gave up on the deploy?", 1),
    ("which note says the deploy failed after 30 retries?", 0),
)
REWORDED = "why did the rollout stall on machine h12?"
# The learning bench's embedder: the packaged all-MiniLM-L6-v2.
EMBEDDER = "minilm"


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


def run(
    out: str, memories: int = 1000, embedder: str | Callable[[], Embedder] = EMBEDDER
) -> dict[str, Any]:
    """Trace the calls and write the report to ``out``; ``embedder`` is the read with
    lessons' embedder: a registered name, or a factory."""
    model = load_embedder(embedder) if isinstance(embedder, str) else embedder()
    with (
        tempfile.TemporaryDirectory(prefix="assocmem-statements-") as folder,
        progress_bar(5, desc="statements bench", unit="step") as bar,
    ):
        with Memory(str(Path(folder) / "trace.db"), agent_id="bench") as mem:
            mem.write("an earlier note about the deploy")  # the scope's layer exists
            write = _traced(mem, lambda: mem.write(**DECLARING_WRITE))
            bar.update(1)
            mem.write_many(_notes(memories))
            bar.update(1)
            mem.read("why did the deploy time out?")  # warm: statistics and caches
            read = _traced(mem, lambda: mem.read(QUESTION))
            mem.write("one more note: the deploy timed out on host h12 again")
            after_write = _traced(mem, lambda: mem.read(QUESTION))
            bar.update(1)
        # The read with every arm: an embedder attached, and lessons and rated reads
        # (precedents) taught by feedback on earlier reads' handles.
        with Memory(str(Path(folder) / "taught.db"), agent_id="bench", embedder=model) as mem:
            mem.write_many(_notes(memories))
            bar.update(1)
            for question, used in TAUGHT:
                asked = mem.read(question, k=5)
                mem.feedback(read=asked.id, used=[asked.items[used].id], outcome=1.0)
            mem.read("why did the deploy time out?")
            taught = _traced(mem, lambda: mem.read(QUESTION))
            for question, used in TAUGHT_MORE:
                asked = mem.read(question, k=5)
                mem.feedback(read=asked.id, used=[asked.items[used].id], outcome=1.0)
            mem.read("why did the deploy time out?")
            by_meaning = _traced(mem, lambda: mem.read(REWORDED))
            bar.update(1)
    report = {
        "benchmark": "statements",
        "declaring_write": write,
        "text_read": {"memories": memories, **read},
        "text_read_after_a_write": {"memories": memories + 1, **after_write},
        "text_read_with_lessons": {"memories": memories, "embedder": model.model_id, **taught},
        "text_read_by_meaning": {
            "memories": memories,
            "embedder": model.model_id,
            "question": REWORDED,
            **by_meaning,
        },
    }
    Path(out).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


def _notes(memories: int) -> list[dict[str, Any]]:
    return [
        {"text": f"note {i}: the deploy timed out after {i} retries on host h{i % 37}"}
        for i in range(memories)
    ]


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1] if len(sys.argv) > 1 else "bench-statements.json"), indent=2))
