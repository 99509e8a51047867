"""Rewordings: whether what outcomes taught one wording of a problem reaches a
question that says it in other words, on hand-written operations problems.

`data/rewordings.json` holds, per problem type, five questions as people ask them,
three rewordings that say the same symptoms in other words, the one note that fixes
it (sharing no word stem with any of its questions or rewordings) and two symptom
notes; the store also holds distractor notes drawn from a vocabulary of operations
words. The generated `learning` workload asks the same of random nouns, which an
embedder places with little sense of what they mean; these are written as an agent
would meet them. Per number of outcomes taught per type (the first questions, each
read and its fix rated through the read's handle), the report gives recall@5 and
MRR@10 of the fix for the rewordings and for the held-out questions, the reference
of returning the note rated for the nearest rated question, and, with half the types
taught, the wrong fixes in the untaught half's top 5.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assocmem import Memory
from assocmem.text.concepts import is_keyword, tokenize
from assocmem.vectors.embedders import load_embedder

from . import learning
from .learning_workload import stems

DATA = Path(__file__).parent / "data" / "rewordings.json"
TAUGHT = (0, 1, 3)
INTERFERENCE_OUTCOMES = 3
DISTRACTORS = 600
DISTRACTOR_WORDS = 6  # per distractor note
TRAINING = 3  # of each type's five questions, the first ones may be taught; the rest are held out
K = learning.READ_K


def load(path: Path = DATA) -> list[dict[str, Any]]:
    """The problem types, refused if a fix shares a content word stem with its questions."""
    types: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["types"]
    for n, problem in enumerate(types):
        asked = set().union(*(_stems(q) for q in (*problem["questions"], *problem["rewordings"])))
        shared = _stems(problem["fix"]) & asked
        if shared:
            raise ValueError(f"type {n}'s fix shares {sorted(shared)} with its questions")
    return types


def _stems(text: str) -> set[str]:
    """The Snowball stems of a text's content words (stop words say nothing)."""
    return {stem for word in tokenize(text) if is_keyword(word) for stem in stems(word)}


def distractors(count: int, seed: int, path: Path = DATA) -> list[str]:
    words = json.loads(path.read_text(encoding="utf-8"))["distractor_words"]
    rng = random.Random(f"{seed}:rewordings")
    return [" ".join(rng.sample(words, DISTRACTOR_WORDS)) for _ in range(count)]


def run(
    out: str,
    *,
    embedder_name: str = "minilm",
    taught: tuple[int, ...] = TAUGHT,
    notes: int = DISTRACTORS,
    seed: int = 0,
) -> dict[str, Any]:
    """Every condition; write the JSON report to ``out`` and return it."""
    start = time.perf_counter()
    types = load()
    embedder = learning.CachedEmbedder(load_embedder(embedder_name))
    report: dict[str, Any] = {
        "config": {"types": len(types), "distractors": notes, "seed": seed, "k": K,
                   "embedder": embedder_name, "training": TRAINING},
        "outcomes": {},
    }  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="assocmem-rewordings-") as tmp:
        base = Path(tmp) / "base.db"
        with Memory(str(base), agent_id=learning.AGENT, embedder=embedder) as mem:
            fixes = [str(mem.write(t["fix"]).id) for t in types]
            mem.write_many([{"text": s} for t in types for s in t["symptoms"]])
            mem.write_many([{"text": text} for text in distractors(notes, seed)])
        everyone = range(len(types))
        for n in taught:
            path = learning.copy_store(base, Path(tmp) / f"taught-{n}.db")
            report["outcomes"][str(n)] = _condition(path, types, fixes, everyone, n, embedder)
            _say(start, f"{n} outcomes: {report['outcomes'][str(n)]}")
        half = range(0, len(types), 2)
        for name, n in (("interference_no_feedback", 0), ("interference", INTERFERENCE_OUTCOMES)):
            path = learning.copy_store(base, Path(tmp) / f"{name}.db")
            report[name] = _condition(path, types, fixes, half, n, embedder)
            _say(start, f"half taught, {n} outcomes: {report[name]}")
    report["seconds"] = round(time.perf_counter() - start, 1)
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def _condition(
    path: Path,
    types: list[dict[str, Any]],
    fixes: list[str],
    taught: range,
    n: int,
    embedder: Any,
) -> dict[str, Any]:
    """Teach ``n`` questions of each type in ``taught``; score every type's rewordings
    and held-out questions, and count other types' fixes in the untaught ones' top 5."""
    rated = [(q, index) for index in taught for q in types[index]["questions"][: min(n, TRAINING)]]
    with Memory(str(path), agent_id=learning.AGENT, embedder=embedder) as mem:
        learning.teach(mem, [(question, [fixes[index]]) for question, index in rated])
        rows: dict[str, list[tuple[float, float]]] = {"rewordings": [], "held_out": []}
        wrong: list[int] = []
        for index, problem in enumerate(types):
            asked = {
                "rewordings": problem["rewordings"],
                "held_out": problem["questions"][TRAINING:],
            }
            for name, questions in asked.items():
                for question in questions:
                    ranked = [str(item.id) for item in mem.read(question, k=K).items]
                    if index in taught:
                        hit = fixes[index] in ranked[: learning.TOP]
                        rows[name].append(
                            (float(hit), learning.reciprocal_rank(ranked, fixes[index]))
                        )
                    elif name == "held_out":
                        others = set(fixes) - {fixes[index]}
                        wrong.append(sum(1 for i in ranked[: learning.TOP] if i in others))
    figures: dict[str, Any] = {
        name: {"recall@5": _mean([r for r, _ in found]), "mrr@10": _mean([m for _, m in found])}
        for name, found in rows.items()
        if found
    }
    figures["nearest_past_question"] = _nearest(types, taught, rated, embedder)
    if wrong:
        figures["untaught_wrong_fixes_in_top5"] = _mean(wrong)
    return figures


def _nearest(
    types: list[dict[str, Any]], taught: range, rated: list[tuple[str, int]], embedder: Any
) -> float | None:
    """How often the rated question nearest a taught type's rewording is of its type."""
    if not rated:
        return None
    asked = [(q, index) for index in taught for q in types[index]["rewordings"]]
    similarity = embedder.embed([q for q, _ in asked]) @ embedder.embed([q for q, _ in rated]).T
    nearest = similarity.argmax(axis=1)
    return _mean(
        [float(rated[j][1] == index) for j, (_, index) in zip(nearest, asked, strict=True)]
    )


def _mean(values: list[float] | list[int]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


def _say(start: float, message: str) -> None:
    print(
        f"[{time.perf_counter() - start:6.1f}s] rewordings: {message}", file=sys.stderr, flush=True
    )
