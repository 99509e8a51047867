"""Earned reinforcement on generated stores: what a memory returned on top gains
against what a weak, frequent false positive gains, and that reads drift not at all
with reinforcement off.

Each trial is a fresh store of ``FILLER`` reports (``the <word> report was filed on
time by the team``), one target fact and one weak note that shares only "the team"
with the reports: it fills the tail of every short report read, at a fifth of the top
score. The target is read ``TOP_READS`` times by its own question (it comes back on
top); then ``WEAK_READS`` report questions return the weak note low. Measured per
trial, then summarised: the target's value gain, the weak note's gain over its reads
and the ranks it came back at, their ratio, the largest value, the mean read latency,
and — with reinforcement off — the value drift and whether repeated reads were
identical. Lexical arms only (no embedder). The JSON goes to ``out``.
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from assocmem import Memory
from assocmem.progress import bar as progress_bar

SYLLABLES = ("ka", "ri", "to", "mu", "zel", "vor", "an", "ix", "bel", "dro", "sen", "quo")
FILLER = 6
TOP_READS = 10
WEAK_READS = 100
AS_OF = "2030-01-01T00:00:00+00:00"


def _trial(path: str, rng: random.Random, reinforce: bool) -> dict[str, Any]:
    words = sorted({"".join(rng.choice(SYLLABLES) for _ in range(3)) for _ in range(40)})
    with Memory(path, agent_id="bench", reinforce=reinforce) as mem:
        target = mem.write(f"the {words[0]} deploy key rotates every monday").id or ""
        weak = mem.write("gardening notes: tomatoes, compost, the team, and cooking plans").id
        mem.write_many([{"text": f"the {w} report was filed on time by the team"}
                        for w in words[1 : FILLER + 1]])  # fmt: skip
        start_values = {r.id: r.value for r in mem.export()}
        latencies, results, top_ranks, weak_ranks = [], [], [], []
        for _ in range(TOP_READS):
            began = time.perf_counter()
            result = mem.read(f"{words[0]} deploy key rotates monday", k=10, as_of=AS_OF)
            latencies.append(time.perf_counter() - began)
            results.append({**result.to_dict(), "id": None})  # each read has its own handle
            found = [i.id for i in result.items]
            top_ranks.append(found.index(target) if target in found else None)
        middle = {r.id: r.value for r in mem.export()}
        for n in range(WEAK_READS):
            began = time.perf_counter()
            result = mem.read(f"{words[1 + n % FILLER]} report filed on time", k=10, as_of=AS_OF)
            latencies.append(time.perf_counter() - began)
            found = [i.id for i in result.items]
            weak_ranks.append(found.index(weak or "") if weak in found else None)
        end = {r.id: r.value for r in mem.export()}
    return {
        "target_gain": middle[target] - start_values[target],
        "target_top1": sum(r == 0 for r in top_ranks) / TOP_READS,
        "weak_gain": end[weak] - middle[weak],
        "weak_returned": sum(r is not None for r in weak_ranks) / WEAK_READS,
        "weak_ranks": [r for r in weak_ranks if r is not None],
        "max_value": max(end.values()),
        "drift": sum(abs(end[k] - start_values[k]) for k in start_values),
        "identical": all(r == results[0] for r in results),
        "latency": statistics.mean(latencies),
    }


def _summary(trials: list[dict[str, Any]], reinforce: bool) -> dict[str, Any]:
    target = statistics.mean(t["target_gain"] for t in trials)
    weak = statistics.mean(t["weak_gain"] for t in trials)
    ranks = [r for t in trials for r in t["weak_ranks"]]
    return {
        "reinforce": reinforce,
        "trials": len(trials),
        "target_reads": TOP_READS,
        "target_top1": round(statistics.mean(t["target_top1"] for t in trials), 4),
        "target_mean_gain": round(target, 6),
        "weak_reads": WEAK_READS,
        "weak_returned": round(statistics.mean(t["weak_returned"] for t in trials), 4),
        "weak_median_rank": statistics.median(ranks) if ranks else None,
        "weak_mean_gain": round(weak, 6),
        "gain_ratio_target_over_weak": round(target / weak, 1) if weak > 0 else None,
        "max_value": round(max(t["max_value"] for t in trials), 6),
        "value_drift": round(sum(t["drift"] for t in trials), 6),
        "repeated_reads_identical": all(t["identical"] for t in trials),
        "read_ms_mean": round(1000 * statistics.mean(t["latency"] for t in trials), 3),
    }


def run(out: str, trials: int = 10, seed: int = 0) -> dict[str, Any]:
    """Run ``trials`` stores with reinforcement on and off; write and return the report."""
    runs = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        progress_bar(2 * trials, desc="reinforce bench", unit="trial") as bar,
    ):
        for reinforce in (True, False):
            rng = random.Random(seed)
            done = []
            for i in range(trials):
                done.append(_trial(str(Path(tmp) / f"t{i}-{int(reinforce)}.db"), rng, reinforce))
                bar.update(1)
            runs.append(_summary(done, reinforce))
    report = {"benchmark": "reinforce", "seed": seed, "runs": runs}
    Path(out).write_text(json.dumps(report, indent=2) + "\n")
    return report
