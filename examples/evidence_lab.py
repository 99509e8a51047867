"""The evidence lab of seed 001, run against assocmem.

A task: remove item 7 from demo-project's store. The graph says demo-project uses
store-v2, whose major version is 2. Memory holds an old v1 guide, the current v2
guide (verified, recheck due in a week), a failed call, an unverified forum tip
with high confidence, and a restricted record almost identical to the question.

    python examples/evidence_lab.py

Similarity alone prefers the old guide; evidence mode returns the current guide,
then nothing once its verification expires on day 7; inspecting the schema on
day 8 stores a fresh fact and evidence mode returns it.
"""

from __future__ import annotations

import json
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from assocmem import Memory

DAY0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
QUESTION = "How do I remove item 7 with the store client?"
# The lab's hand-made two-number keys and values (seed 001): the query is [1, 0];
# a value is [object-argument flag, major version].
QUERY_KEY = [1.0, 0.0]


def day(n: float) -> str:
    return (DAY0 + timedelta(days=n)).isoformat()


def populate(mem: Memory) -> dict[str, str]:
    """Write the lab's records; returns name → id."""
    ids: dict[str, str] = {}

    def put(name: str, text: str, **fields: Any) -> None:
        result = mem.write(text, **fields)
        assert result.stored, result
        ids[name] = result.id or ""

    mem.declare({"relations": [
        {"subject": "demo-project", "predicate": "uses", "object": "store-v2"},
        {"subject": "store-v2", "predicate": "major version", "object": "2"},
    ]})  # fmt: skip
    put("old guide", "Store client guide: remove an item with store.remove(item_id) using the id.",
        kind="semantic", version="1", source="https://docs.example.com/store/v1/guide",
        observed_at=day(-400), verified_at=day(-400), verification_scope="v1 API reference",
        confidence=0.9, meta={"key": [2.0, 0.0], "value": [0.0, 1.0]})  # fmt: skip
    put("current guide", "Store client guide: remove an item with store.remove({'id': item_id}),"
        " passing an object argument.", kind="semantic", version="2",
        source="docs.example.com", observed_at=day(0), verified_at=day(0), recheck_by=day(7),
        verification_scope="v2 API reference", confidence=0.8,
        meta={"key": [1.6, 0.8], "value": [1.0, 2.0]})  # fmt: skip
    put("failed call", "store.remove(7) failed on store-v2: TypeError, expected an object.",
        kind="episodic", version="2", source="demo-project CI log", observed_at=day(0.5),
        tags=["failed-call"], meta={"key": [1.4, 0.4], "value": [0.0, 2.0]})  # fmt: skip
    put("forum tip", "Forum tip: with the store client just call store.remove(7), it always works.",
        kind="semantic", version="2", source="https://forum.example.net/t/123",
        observed_at=day(1), confidence=0.95)  # fmt: skip
    put("restricted", "How do I remove item 7 with the store client? Internal admin override.",
        kind="semantic", version="2", source="internal runbook", observed_at=day(0),
        verified_at=day(0), recheck_by=day(30), access=["maintainer"])  # fmt: skip
    return ids


def scenario(path: str) -> dict[str, Any]:
    """Every step of the lab, as data (the test checks it; `main` prints it)."""
    with Memory(path, agent_id="lab", role="student") as mem:
        ids = populate(mem)
        names = {v: k for k, v in ids.items()}
        major = mem.resolve("demo-project", "uses", "major version")
        version = {"version": {"$in": major}}

        def evidence(at: str) -> dict[str, Any]:
            result = mem.read(QUESTION, mode="evidence", where=version, as_of=at)
            return {
                "items": [names.get(i.id, i.text) for i in result.items],
                "gates": {g: sorted(names.get(i, i) for i in dropped)
                          for g, dropped in result.gates.items()},
            }  # fmt: skip

        steps: dict[str, Any] = {"major version (graph)": major}
        soft = mem.soft_read(QUERY_KEY, temperature=0.5)
        steps["similarity only (soft read)"] = [(names[i], round(w, 3)) for i, w in soft.weights]
        steps["soft read mixture"] = [round(v, 2) for v in soft.mixture]
        plain = mem.read(QUESTION, k=10)
        steps["plain read (student)"] = [names.get(i.id, i.id) for i in plain.items]
        steps["evidence, day 1"] = evidence(day(1))
        mem.protect([ids["current guide"]])
        steps["evidence, day 8 (verification expired)"] = evidence(day(8))
        archived = mem.archive(where={"recheck_by": {"$lte": day(8)}})
        steps["archive expired on day 8"] = {
            "archived": [names[i] for i in archived.changed],
            "skipped": {names[i]: why for i, why in archived.skipped.items()},
        }
        inspected = mem.write(
            "Schema inspection of store-v2: remove(item) takes an object {'id': int}.",
            kind="semantic", version="2", source="store-v2 schema", observed_at=day(8),
            verified_at=day(8), recheck_by=day(15), verification_scope="live schema",
        )  # fmt: skip
        names[inspected.id or ""] = "schema inspection"
        steps["evidence, day 8 after inspection"] = evidence(day(8))
    with Memory(path, agent_id="lab", role="maintainer") as maintainer:
        steps["plain read (maintainer)"] = [
            names.get(i.id, i.id) for i in maintainer.read(QUESTION, k=3).items
        ]
    return steps


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        steps = scenario(str(Path(folder) / "lab.db"))
    for name, outcome in steps.items():
        print(f"{name}:\n  {json.dumps(outcome, ensure_ascii=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
