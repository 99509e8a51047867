"""Attribution figures: what verify_attribution catches, and what a budget bounds.

Two sections, each on fresh SQLite stores with receipts on:
- ``attribution_floor``: a derived summary and its sourced parents; a source
  relabel and a taint strip (out-of-band SQL edits) must be reported, a legitimate
  ``slash`` must not, and editing a past receipt must break the chain.
- ``lifetime_budget``: a source whose bad rate stays below the monitor's ``k``
  drives one irreversible action per step over growing horizons; the CUSUM raises
  no case (the documented limit), the actions an unbudgeted store would let through
  grow with the horizon, and `spend_irreversible` caps what it actually spends at
  the budget. A good source meanwhile keeps its reversible uses (never charged).
Runs against any checkout: ``python -m assocmem_bench.trust_attribution_bench OUT``.
"""

from __future__ import annotations

import json
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assocmem import Memory
from assocmem.progress import bar as progress_bar

HORIZONS = (50, 100, 200, 400, 800)


def _edit(db: str, sql: str, params: tuple[Any, ...] = ()) -> None:
    """An out-of-band edit, as someone with write access to the file makes it."""
    conn = sqlite3.connect(db)
    try:
        conn.execute(sql, params)
        conn.commit()
    finally:
        conn.close()


def attribution_floor(folder: Path) -> dict[str, Any]:
    db = str(folder / "floor.db")
    with Memory(db, agent_id="bench", receipts=True) as mem:
        parents = [
            mem.write(f"observation {i} about the deploy", source=f"https://site{i}.example.org/p")
            .id or ""
            for i in range(3)
        ]  # fmt: skip
        summary = mem.write("a summary of the deploy", derived_from=parents).id or ""
        relabelled = mem.write("a claim from a rival", source="rival.net").id or ""
        slashed = mem.write("a claim later slashed", source="caught.example.net").id or ""
        baseline = mem.verify_attribution()
        mem.slash([slashed], scope="source")
        after_slash = mem.verify_attribution()
    _edit(db, "UPDATE memories SET source = ?, source_canonical = ? WHERE id = ?",
          ("trusted.org", "trusted.org", relabelled))  # fmt: skip
    _edit(db, "DELETE FROM trust_taint WHERE memory_seq = (SELECT seq FROM memories WHERE id = ?)",
          (summary,))  # fmt: skip
    with Memory(db, agent_id="bench") as mem:
        tampered = mem.verify_attribution()
    _edit(db, "UPDATE trust_receipts SET sources = '[]' WHERE position = 2")
    with Memory(db, agent_id="bench") as mem:
        edited = mem.verify_attribution()
    found = {m.id for m in tampered.mismatches}
    return {
        "receipts": baseline.receipts,
        "clean_before": baseline.ok,
        "slash_false_alarm": not after_slash.ok,
        "relabel_detected": relabelled in found,
        "taint_strip_detected": summary in found,
        "mismatches": len(found),
        "chain_intact_after_receipt_edit": edited.chain_intact,
        "broken_at": edited.broken_at,
    }


def lifetime_budget(
    folder: Path, horizons: tuple[int, ...], reversible: int, budget: float, seed: int
) -> dict[str, Any]:
    rows = []
    for horizon in horizons:
        rng = random.Random(seed)
        with Memory(str(folder / f"budget-{horizon}.db"), agent_id="bench") as mem:
            drip = mem.write("a slowly poisoned tip", source="drip.example.net").id or ""
            allowed = bad = bad_total = 0
            for _ in range(horizon):
                is_bad = rng.random() < 0.05  # below k = 0.1: negative drift
                bad_total += is_bad
                mem.monitor([drip], "bad" if is_bad else "good", k=0.1, h=4.0)
                if mem.spend_irreversible([drip], 1.0, budget).allowed:
                    allowed += 1
                    bad += is_bad
            rows.append({
                "horizon": horizon,
                "cases": len(mem.cases()),
                "irreversible_unbudgeted": horizon,
                "bad_irreversible_unbudgeted": bad_total,
                "irreversible_spent": allowed,
                "bad_irreversible_spent": bad,
            })  # fmt: skip
    with Memory(str(folder / "good.db"), agent_id="bench") as mem:
        good = mem.write("a reliable tip", source="good.example.com").id or ""
        # Each reversible use is credited through the monitor and never charged.
        uses = sum(1 for _ in range(reversible) if not mem.monitor([good], "good").raised)
        spend = mem.spend_irreversible([good], 1.0, budget)
        good_cases = len(mem.cases())
    return {
        "budget": budget,
        "k": 0.1,
        "drip_bad_rate": 0.05,
        "drip": rows,
        "blast_capped": all(r["irreversible_spent"] <= budget for r in rows),
        "good_source": {
            "reversible_uses": uses,
            "cases": good_cases,
            "irreversible_still_allowed": spend.allowed,
            "remaining": spend.sources[0].remaining,
        },
    }


def run(
    out: str,
    horizons: tuple[int, ...] = HORIZONS,
    reversible: int = 10_000,
    budget: float = 10.0,
    seed: int = 0,
) -> dict[str, Any]:
    started = time.perf_counter()
    with (
        tempfile.TemporaryDirectory(prefix="assocmem-trust-attr-") as tmp,
        progress_bar(2, desc="trust-attribution bench", unit="part") as bar,
    ):
        folder = Path(tmp)
        floor = attribution_floor(folder)
        bar.update(1)
        report = {
            "benchmark": "trust-attribution",
            "attribution_floor": floor,
            "lifetime_budget": lifetime_budget(folder, horizons, reversible, budget, seed),
        }
        bar.update(1)
    report["seconds"] = round(time.perf_counter() - started, 2)
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1] if len(sys.argv) > 1 else "bench-trust-attr.json"), indent=2))
