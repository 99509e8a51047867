"""Consolidation benchmark: what a keep-budget keeps, what a dream pass costs, and
whether recall survives one.

(1) Keep-budget. A generated stream in which value is anti-correlated with access
for a load-bearing cold subset (semantic and procedural facts of high value, old
and almost never read), next to popular low-value chatter (fresh, read often) and
ordinary memories. At each budget (50 %, 30 %, 12.5 % of the stream) four policies
choose what stays: ``value`` is `Memory.consolidate(keep=...)` itself, on a real
SQLite store (value × per-kind half-life); ``fifo`` keeps the newest; ``random`` a
seeded sample; ``access_decay`` a popularity clock, the usual alternative
(a 7-day half-life restarted by every read). Reported: the share of high-value
memories kept (the top fifth by value), the share of total value kept and the
share of the cold subset kept.
(2) Cost. The seconds a dream pass takes over ``--size`` generated memories (a
first pass, a second one that finds nothing new, and one with a keep-budget).
(3) With ``--locomo PATH``: recall@k of evidence turns before and after a
`consolidate()` (no keep-budget) on each conversation, indexed as
`locomo.index_assocmem` does.

JSON to ``--out``; progress on stderr.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from assocmem import Memory
from assocmem.progress import bar as progress_bar
from assocmem.vectors.embedders import load_embedder

from . import locomo
from .measure import environment

BUDGETS = (0.5, 0.3, 0.125)
POLICIES = ("value", "fifo", "random", "access_decay")
ACCESS_HALF_LIFE_DAYS = 7.0
BATCH = 5_000


@dataclass(frozen=True)
class Item:
    text: str
    kind: str
    value: float
    age_days: float
    reads: int
    cold: bool


def stream(n: int, seed: int) -> list[Item]:
    """The generated stream: 10 % cold load-bearing facts, 30 % popular chatter, the
    rest ordinary memories."""
    rng = random.Random(seed)
    items = []
    for i in range(n):
        roll = rng.random()
        if roll < 0.1:
            kind = "procedural" if rng.random() < 0.5 else "semantic"
            items.append(
                Item(
                    f"rule {i}: check {i} before step {i}",
                    kind,
                    rng.uniform(5, 10),
                    rng.uniform(60, 365),
                    rng.randint(0, 1),
                    True,
                )
            )
        elif roll < 0.4:
            items.append(
                Item(
                    f"chat {i}: small talk number {i}",
                    "episodic",
                    rng.uniform(0.1, 1),
                    rng.uniform(0, 10),
                    rng.randint(10, 50),
                    False,
                )
            )
        else:
            kind = "semantic" if rng.random() < 0.3 else "episodic"
            items.append(
                Item(
                    f"note {i}: an event numbered {i}",
                    kind,
                    rng.uniform(0.5, 4),
                    rng.uniform(0, 365),
                    rng.randint(0, 10),
                    False,
                )
            )
    return items  # fmt: skip


def kept_by_value(items: Sequence[Item], keep: int, folder: Path, now: datetime) -> set[int]:
    """The items `Memory.consolidate(keep=...)` leaves active."""
    with Memory(str(folder / f"budget-{keep}.db"), agent_id="bench") as mem:
        ids = []
        for start in range(0, len(items), BATCH):
            results = mem.write_many([
                {"text": it.text, "kind": it.kind, "value": it.value,
                 "observed_at": (now - timedelta(days=it.age_days)).isoformat()}
                for it in items[start : start + BATCH]
            ])  # fmt: skip
            ids += [r.id for r in results]
        archived = set(mem.consolidate(keep=keep).archived)
    return {i for i, memory_id in enumerate(ids) if memory_id not in archived}


def kept_by(policy: str, items: Sequence[Item], keep: int, seed: int) -> set[int]:
    order = range(len(items))
    if policy == "fifo":
        return set(sorted(order, key=lambda i: items[i].age_days)[:keep])
    if policy == "random":
        return set(random.Random(seed).sample(list(order), keep))

    # access_decay: the clock restarts at each read, reads spread over the item's life.
    def freshness(i: int) -> float:
        return float(0.5 ** (items[i].age_days / (1 + items[i].reads) / ACCESS_HALF_LIFE_DAYS))

    return set(sorted(order, key=lambda i: (-freshness(i), i))[:keep])


def budget_section(n: int, seed: int) -> dict[str, Any]:
    items = stream(n, seed)
    now = datetime.now(UTC)
    ranked = sorted(range(n), key=lambda i: -items[i].value)
    high = set(ranked[: n // 5])
    cold = {i for i, it in enumerate(items) if it.cold}
    total = sum(it.value for it in items)
    out: dict[str, Any] = {"stream": n, "high_value": len(high), "cold": len(cold)}
    with tempfile.TemporaryDirectory() as folder:
        for budget in BUDGETS:
            keep = int(n * budget)
            row: dict[str, Any] = {}
            for policy in POLICIES:
                print(f"consolidate bench: budget {budget} {policy}", file=sys.stderr)
                kept = (
                    kept_by_value(items, keep, Path(folder), now)
                    if policy == "value"
                    else kept_by(policy, items, keep, seed)
                )
                row[policy] = {
                    "high_value_kept": round(len(kept & high) / len(high), 4),
                    "value_kept": round(sum(items[i].value for i in kept) / total, 4),
                    "cold_kept": round(len(kept & cold) / len(cold), 4),
                }
            row["value_kept_ratio"] = {
                other: round(row["value"]["value_kept"] / row[other]["value_kept"], 2)
                for other in POLICIES[1:]
            }
            row["high_value_kept_ratio"] = {
                other: round(
                    row["value"]["high_value_kept"] / max(row[other]["high_value_kept"], 1e-9), 2
                )
                for other in POLICIES[1:]
            }
            out[f"keep {budget:.1%}"] = row
    return out


def timing_section(size: int, seed: int) -> dict[str, Any]:
    """Seconds of a dream pass over ``size`` generated memories of a 5,000-word
    vocabulary (2 % near-copies, 1 % state statements)."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(5_000)]
    now = datetime.now(UTC)
    rows: list[dict[str, Any]] = []
    for i in range(size):
        roll = rng.random()
        if roll < 0.02 and rows:
            text = rows[-1]["text"] + " indeed"
        elif roll < 0.03:
            text = f"the switch {rng.randrange(200)} is {rng.choice(['on', 'off'])}"
        else:
            text = " ".join(rng.choices(words, k=8))
        rows.append({"text": text, "observed_at": (now - timedelta(minutes=size - i)).isoformat(),
                     "kind": rng.choice(["episodic", "episodic", "semantic", "procedural"]),
                     "value": round(rng.uniform(0.1, 5), 3)})  # fmt: skip
    with tempfile.TemporaryDirectory() as folder, Memory(f"{folder}/t.db", agent_id="b") as mem:
        start = time.perf_counter()
        with progress_bar(size, desc="consolidate bench: writing", unit="memory") as bar:
            for at in range(0, size, BATCH):
                mem.write_many(rows[at : at + BATCH])
                bar.update(len(rows[at : at + BATCH]))
        write_seconds = time.perf_counter() - start
        passes = {}
        for label, keep in (("first", None), ("second", None), ("keep_half", size // 2)):
            print(f"consolidate bench: {label} pass", file=sys.stderr)
            start = time.perf_counter()
            report = mem.consolidate(keep=keep)
            passes[label] = {
                "seconds": round(time.perf_counter() - start, 2),
                "hubs": len(report.hubs),
                "duplicate_links": report.duplicate_links,
                "superseded": len(report.superseded),
                "archived": len(report.archived),
            }
    return {"memories": size, "write_seconds": round(write_seconds, 1), "passes": passes}


def locomo_section(
    path: str, conversations: Sequence[str] | None, embedder_name: str | None
) -> dict[str, Any]:
    loaded = locomo.load(path, conversations)
    embedder = load_embedder(embedder_name) if embedder_name else None
    before, after = locomo.Scores(), locomo.Scores()
    changes: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for conversation in loaded:
            print(f"consolidate bench: locomo {conversation.sample_id}", file=sys.stderr)
            target = f"{folder}/{conversation.sample_id}.db"
            mem, dia_of = locomo.index_assocmem(conversation, target, embedder)
            with mem:
                for scores in (before, after):
                    if scores is after:
                        report = mem.consolidate()
                        changes[conversation.sample_id] = {
                            "hubs": len(report.hubs),
                            "duplicate_links": report.duplicate_links,
                            "superseded": len(report.superseded),
                        }
                    for question in conversation.questions:
                        items = mem.read(question.text, k=max(locomo.KS)).items
                        ranked = [dia_of[i.id] for i in items]
                        scores.add(question, ranked)
    return {
        "data": Path(path).name,
        "embedder": embedder.model_id if embedder else None,
        "before": before.table(),
        "after": after.table(),
        "consolidate": changes,
    }


def run(
    out: str,
    *,
    size: int = 100_000,
    stream_size: int = 2_000,
    seed: int = 0,
    locomo_path: str | None = None,
    conversations: Sequence[str] | None = None,
    embedder_name: str | None = None,
) -> dict[str, Any]:
    """Run the sections and write the JSON report to ``out``; returns the report."""
    report: dict[str, Any] = {
        "benchmark": "consolidate",
        "keep_budget": budget_section(stream_size, seed),
        "dream_pass": timing_section(size, seed),
    }
    if locomo_path:
        report["locomo"] = locomo_section(locomo_path, conversations, embedder_name)
    report["environment"] = environment()
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report
