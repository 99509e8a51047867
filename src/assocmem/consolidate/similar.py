"""Which memories say nearly the same thing, and which state the opposite of each other.

Invariant: pure functions of texts; nothing here reads or writes a store. Two
memories are near-duplicates only when their content words (negations and state
words included, so "on" and "off" never agree) overlap by `DUPLICATE_SIMILARITY`;
a state clash needs the same subject words and opposite polarity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from assocmem.lifecycle.contradictions import NEGATIONS, content_words
from assocmem.text.concepts import tokenize

# Jaccard of content words two memories need to be linked as near-duplicates: high,
# so two memories about one topic that say different things stay apart.
DUPLICATE_SIMILARITY = 0.8
# Fewer content words than this carry no claim worth linking ("Yes!", "ok").
MIN_WORDS = 2
# The memories one prefix word may pair with: a word shared by more is common
# vocabulary, and scanning it would make the pass quadratic.
MAX_BUCKET = 2_000

# Words naming a binary state, with the polarity each states.
STATES: dict[str, bool] = {
    "on": True, "off": False, "enabled": True, "disabled": False, "true": True,
    "false": False, "open": True, "closed": False, "active": True, "inactive": False,
    "allowed": True, "denied": False, "locked": True, "unlocked": False,
    "online": True, "offline": False,
}  # fmt: skip
# A state statement names a small subject ("the feature flag"); a long text that
# happens to hold a state word is not one.
MAX_SUBJECT_WORDS = 6


def words(text: str) -> frozenset[str]:
    """The folded content words of a text, with negations and state words kept."""
    tokens = tokenize(text)
    kept = [t for t in tokens if t in NEGATIONS or t in STATES]
    return frozenset(kept + content_words(t for t in tokens if t not in STATES))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def near_duplicates(
    texts: Sequence[str], threshold: float = DUPLICATE_SIMILARITY
) -> list[tuple[int, int, float]]:
    """Pairs ``(i, j, similarity)``, i < j, of texts whose content words overlap by at
    least ``threshold`` (Jaccard). Prefix filtering: with words ordered rarest first,
    two sets that reach the threshold share a word among each one's first
    ``|x| - ceil(threshold·|x|) + 1``, so only those are indexed and compared."""
    sets = [words(t) for t in texts]
    frequency: dict[str, int] = {}
    for s in sets:
        for w in s:
            frequency[w] = frequency.get(w, 0) + 1
    index: dict[str, list[int]] = {}
    pairs = []
    for j, s in enumerate(sets):
        if len(s) < MIN_WORDS:
            continue
        ordered = sorted(s, key=lambda w: (frequency[w], w))
        prefix = ordered[: len(s) - math.ceil(threshold * len(s) - 1e-9) + 1]
        seen: set[int] = set()
        for w in prefix:
            bucket = index.setdefault(w, [])
            for i in bucket[-MAX_BUCKET:]:
                if i in seen:
                    continue
                seen.add(i)
                other = sets[i]
                if min(len(s), len(other)) < threshold * max(len(s), len(other)):
                    continue
                similarity = jaccard(s, other)
                if similarity >= threshold and not clash(texts[i], texts[j]):
                    pairs.append((i, j, round(similarity, 4)))
            bucket.append(j)
    return pairs


@dataclass(frozen=True)
class StateClaim:
    """A statement of one subject's binary state: ``polarity`` True for on/open/...."""

    subject: frozenset[str]
    polarity: bool


def state_claim(text: str) -> StateClaim | None:
    """The state a short text states ("the flag is on", "the flag is not off"), or
    None when it states none, or more than one state word kind."""
    tokens = tokenize(text)
    stated = {STATES[t] for t in tokens if t in STATES}
    named = {t for t in tokens if t in STATES}
    if len(stated) != 1 or len(named) != 1:
        return None
    negated = sum(t in NEGATIONS for t in tokens) % 2 == 1
    subject = frozenset(content_words(t for t in tokens if t not in STATES))
    if not subject or len(subject) > MAX_SUBJECT_WORDS:
        return None
    return StateClaim(subject, stated.pop() != negated)


def clash(first: str, second: str) -> bool:
    """Whether two texts state opposite states of the same subject."""
    a, b = state_claim(first), state_claim(second)
    return a is not None and b is not None and a.subject == b.subject and a.polarity != b.polarity
