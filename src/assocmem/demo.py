"""The restart control (does what a memory learned outlive its process?), as three
steps meant for three processes.

``learn`` writes six notes, reads, records two helpful answers and reads again;
``recall`` is a fresh process reading the same store, links loaded; ``rebuild``
is a fresh process that copies only the notes into a new store, so its links are
recomputed from the notes, as if the learned weights had never been saved. Each
step prints one JSON object. Run ``python -m assocmem.demo STEP DB``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from assocmem.memory import Memory
from assocmem.types import ReadResult

AGENT = "demo"
QUESTION = ["timeout"]
NOTES = (
    ("The deploy timed out after the release.", ["timeout", "deploy"]),
    ("Retried the request and it went through.", ["timeout", "retry"]),
    ("Timed out again, retried, fine.", ["timeout", "retry"]),
    ("Backoff of two seconds fixed the flaky call.", ["retry", "backoff"]),
    ("Jitter on the backoff spread the calls out.", ["backoff", "jitter"]),
    ("Cache warmed before the deploy.", ["cache", "deploy"]),
)


def summary(result: ReadResult) -> dict[str, Any]:
    """A read as plain data: what it added and which note came by which link."""
    return {
        "query_concepts": list(result.query_concepts),
        "expanded_concepts": result.expanded_concepts,
        "items": [
            {
                "text": item.text,
                "source": item.source,
                "via": [v.concept for v in item.via],
            }
            for item in result.items
        ],
    }


def learn(db: str) -> dict[str, Any]:
    """Process 1: write, read, two helpful answers, read again."""
    with Memory(db, agent_id=AGENT) as mem:
        mem.write_many([{"text": text, "concepts": concepts} for text, concepts in NOTES])
        before = mem.read(concepts=QUESTION)
        used = [item.id for item in before.items if item.text.startswith("Backoff")]
        for _ in range(2):
            mem.feedback(used, outcome=1.0, read=before.id)
        return {"before": summary(before), "after": summary(mem.read(concepts=QUESTION))}


def recall(db: str) -> dict[str, Any]:
    """Process 2: a fresh process, links loaded from the store."""
    with Memory(db, agent_id=AGENT) as mem:
        return summary(mem.read(concepts=QUESTION))


def rebuild(db: str) -> dict[str, Any]:
    """Process 3, the control: only the notes survive; links are rebuilt from them."""
    fresh = str(Path(db).with_name(Path(db).stem + "-rebuilt.db"))
    with Memory(db, agent_id=AGENT) as saved, Memory(fresh, agent_id=AGENT) as rebuilt:
        rebuilt.write_many(
            [{"text": r.text, "concepts": list(r.concept_forms)} for r in saved.export()]
        )
        return summary(rebuilt.read(concepts=QUESTION))


STEPS = {"learn": learn, "recall": recall, "rebuild": rebuild}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in STEPS:
        print(f"usage: python -m assocmem.demo {{{'|'.join(STEPS)}}} DB", file=sys.stderr)
        return 2
    print(json.dumps(STEPS[args[0]](args[1])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
