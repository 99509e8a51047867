"""The oracle arm: declarations derived mechanically from LoCoMo itself.

It bounds what the declared graph can contribute, so it reads the annotations a
real deployment would not have. Per conversation it declares:

- entities: each speaker, and the proper nouns of each turn (a deterministic
  rule here, outside the library: runs of capitalised words that do not open a
  sentence); each turn is recorded as mentioning its speaker and its nouns;
- record → record relations between the evidence turns of one question that
  share a session (predicate ``same_evidence_session``);
- entity → entity relations between the entities the evidence turns of one
  question mention (predicate ``evidence_link``), so the walk has edges to follow.

Reconstruct's evidence recall counts a question's evidence turn as found when it
heads one of the top k items or is evidence inside one of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import combinations
from typing import Any

from assocmem import Memory

# Capitalised words that open sentences or are too common to name anything.
_NOT_NAMES = frozenset(
    "I I'm I've I'll I'd Im Ive The A An And But So Oh Hey Hi Wow Yeah Yes No Thanks Thank"
    " Hope It It's That This What When Where Who Why How Let Me My We Our You Your He She"
    " They Sounds Sure Great Good Nice Cool Awesome Haha Omg Btw Also".split()
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")


def proper_nouns(text: str) -> list[str]:
    """Runs of capitalised words that do not open a sentence (a deliberately simple rule)."""
    names: list[str] = []
    for sentence in _SENTENCE.split(text):
        words = _WORD.findall(sentence)
        run: list[str] = []
        for position, word in enumerate(words):
            capital = word[0].isupper() and len(word) >= 3 and word not in _NOT_NAMES
            if capital and position > 0:
                run.append(word)
                continue
            if run:
                names.append(" ".join(run))
            run = []
        if run:
            names.append(" ".join(run))
    return list(dict.fromkeys(names))


def declare(mem: Memory, conversation: Any, ids: dict[str, str]) -> dict[str, int]:
    """Declare the oracle graph for one conversation; ``ids`` maps dia_id → memory id."""
    nouns: dict[str, list[str]] = {}
    for turn in conversation.turns:
        body = turn.text.split(": ", 1)[-1]
        nouns[turn.dia_id] = [turn.speaker, *proper_nouns(body)]
        mem.declare({"entities": nouns[turn.dia_id]}, anchor_ref=f"mem:{ids[turn.dia_id]}")
    session = {t.dia_id: t.session for t in conversation.turns}
    counts = {"entities": len({n for names in nouns.values() for n in names}),
              "relations": 0, "dropped": 0}  # fmt: skip
    for question in conversation.questions:
        records, entities = _question_relations(question.evidence, session, ids, nouns)
        outcome = mem.declare({"relations": records + entities})
        counts["relations"] += len(outcome.relations)
        counts["dropped"] += len(outcome.dropped)
    return counts


def _question_relations(
    evidence: Iterable[str],
    session: dict[str, int],
    ids: dict[str, str],
    nouns: dict[str, list[str]],
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    turns = sorted(set(evidence))
    records = [
        {
            "subject": f"mem:{ids[a]}",
            "predicate": "same_evidence_session",
            "object": f"mem:{ids[b]}",
        }
        for a, b in combinations(turns, 2)
        if session[a] == session[b]
    ]
    named = sorted({n for t in turns for n in nouns.get(t, [])})
    entities = [
        {"subject": a, "predicate": "evidence_link", "object": b} for a, b in combinations(named, 2)
    ]
    return records, entities
