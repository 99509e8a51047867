"""Read latency with learned state at scale: the learning workload's notes scaled up,
one copy untaught and one taught through many rated reads.

The taught copy rates one read per step, each type's training wordings in turn and
its fixing note as the one that helped, through the read's handle, as an agent would.
Both copies are then read with the held-out and synonym wordings, in turn question by
question, after an untimed pass that reads each once in both (`learning.timed_reads`):
no timed read pays opening costs or embedding. The report holds p50/p95 for each and their ratios.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assocmem import Memory
from assocmem.progress import bar as progress_bar
from assocmem.vectors.embedders import load_embedder

from . import learning, learning_workload
from .measure import environment

ROUNDS = 2  # each question is read this many times in each store


def run(
    out: str,
    *,
    notes: int = 100_000,
    rated: int = 10_000,
    types: int = 40,
    seed: int = 0,
    embedder_name: str | None = None,
) -> dict[str, Any]:
    """Build, teach and time; write the JSON report to ``out`` and return it."""
    start = time.perf_counter()

    def say(message: str) -> None:
        print(f"[{time.perf_counter() - start:7.1f}s] {message}", file=sys.stderr, flush=True)

    workload = learning_workload.generate(seed, types, notes)
    embedder = learning.CachedEmbedder(load_embedder(embedder_name)) if embedder_name else None
    with tempfile.TemporaryDirectory(prefix="assocmem-learning-scale-") as tmp:
        untaught = Path(tmp) / "untaught.db"
        id_of = learning.build_store(workload, untaught, embedder)
        built = time.perf_counter() - start
        say(f"built {notes} notes")
        taught = learning.copy_store(untaught, Path(tmp) / "taught.db")
        steps = [
            (t.training[(i // types) % len(t.training)].text, [id_of[t.fix_key]])
            for i in range(rated)
            for t in [workload.types[i % types]]
        ]
        with (
            Memory(str(taught), agent_id=learning.AGENT, embedder=embedder) as mem,
            progress_bar(len(steps), desc="rated reads", unit="read") as bar,
        ):
            learning.teach(mem, steps, lambda: bar.update(1))
        say(f"rated {rated} reads")
        questions = [q.text for t in workload.types for q in (*t.held_out, *t.synonyms)]
        stores = {"no_feedback": untaught, "taught": taught}
        times = learning.timed_reads(stores, questions, embedder, ROUNDS)
    report = {
        "environment": environment(),
        "config": {
            "notes": notes,
            "rated_reads": rated,
            "types": types,
            "seed": seed,
            "embedder": embedder_name or "none",
            "k": learning.READ_K,
            "questions": len(questions),
            "rounds": ROUNDS,
        },
        "no_feedback": learning.percentiles(times["no_feedback"]),
        "taught": learning.percentiles(times["taught"]),
        "seconds": {"build": round(built, 1), "total": round(time.perf_counter() - start, 1)},
    }
    for cut in ("p50_ms", "p95_ms"):
        ratio = report["taught"][cut] / report["no_feedback"][cut]
        report[f"{cut.split('_')[0]}_ratio"] = round(ratio, 3)
    say(f"read ms untaught {report['no_feedback']} taught {report['taught']}")
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report
