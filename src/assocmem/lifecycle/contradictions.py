"""Contradictions flagged for review: one supersession key holding different values,
near-identical claims of opposite polarity, and one claim with two values in a slot.

Invariant: contradictions are flagged, never resolved; nothing here writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from assocmem.lifecycle.types import Contradiction
from assocmem.store import View
from assocmem.text.concepts import STOP_WORDS, fold_word, tokenize
from assocmem.types import Record

# Memories one check reads at most, and flags it returns at most.
MAX_SCAN = 100_000
MAX_FLAGS = 200
# Two claims are "the same claim" for a polarity check when this share of their
# content words agree (Jaccard): high, so paraphrases of different facts stay apart.
POLARITY_OVERLAP = 0.6
NEGATIONS = frozenset({"not", "no", "never", "cannot", "can't", "don't", "doesn't", "didn't",
                       "isn't", "aren't", "wasn't", "won't", "without", "nor"})  # fmt: skip
# Slot claims: two claims alike word for word but for one value ("Paris is the capital
# of France" / "Lyon is the capital of France"). Only a claim stating what something
# *is* holds one value ("Alice likes green tea" and "... black tea" are both true), so
# a claim needs a copula; and between `MIN_SLOT_WORDS` and `MAX_SLOT_WORDS` content
# words, so the shared wording (all but one word) is most of each claim.
COPULAS = frozenset({"is", "are", "was", "were", "equals"})
MIN_SLOT_WORDS = 3
MAX_SLOT_WORDS = 12


class LexicalReads(Protocol):
    """What finding a claim's near-identical negation reads: the text index (core)."""

    def lexical(self, view: View, terms: Sequence[str], limit: int) -> list[tuple[int, float]]: ...


class ContradictionReads(LexicalReads, Protocol):
    """What flagging contradictions reads: the lifecycle part's selection, memory rows
    and the text index (a Protocol, so a store typed for any room's wider need fits)."""

    def select(self, view: View, limit: int) -> list[int]: ...

    def records_by_seq(self, seqs: Sequence[int]) -> dict[int, Record]: ...


def contradictions(store: ContradictionReads, view: View) -> list[Contradiction]:
    """Incompatible pairs for review: one key with different values, and near-identical
    claims of opposite polarity. Nothing is edited."""
    wide = replace(view, statuses=("active", "superseded"))
    seqs = store.select(wide, MAX_SCAN)
    records = store.records_by_seq(seqs)
    flags = _key_conflicts(records) + _polarity_clashes(store, view, records)
    flags += _slot_clashes(records, {frozenset((f.first, f.second)) for f in flags})
    return flags[:MAX_FLAGS]


def _key_conflicts(records: Mapping[int, Record]) -> list[Contradiction]:
    groups: dict[tuple[str, str], list[Record]] = {}
    for record in records.values():
        if record.key:
            groups.setdefault(record.key, []).append(record)
    flags = []
    for key, members in sorted(groups.items()):
        current = next((m for m in members if m.status == "active"), None)
        if current is None:
            continue
        for other in members:
            if other.id != current.id and _claim(other.text) != _claim(current.text):
                flags.append(Contradiction(
                    "key", current.id, other.id,
                    f"{key[0]} / {key[1]}: current value observed {current.observed_at}, "
                    f"other observed {other.observed_at}",
                ))  # fmt: skip
    return flags


def _polarity_clashes(
    store: LexicalReads, view: View, records: Mapping[int, Record]
) -> list[Contradiction]:
    flags, seen = [], set()
    active = {s: r for s, r in records.items() if r.status == "active"}
    for seq, record in sorted(active.items()):
        words = _claim(record.text)
        if not words & NEGATIONS:
            continue
        content = sorted(words - NEGATIONS)
        for other in store.lexical(view, content, 20):
            match = active.get(other[0])
            if match is None or other[0] == seq or (min(seq, other[0]), max(seq, other[0])) in seen:
                continue
            other_words = _claim(match.text)
            if other_words & NEGATIONS:
                continue
            overlap = len(set(content) & other_words) / max(1, len(set(content) | other_words))
            if overlap >= POLARITY_OVERLAP:
                seen.add((min(seq, other[0]), max(seq, other[0])))
                flags.append(Contradiction(
                    "polarity", record.id, match.id,
                    f"{overlap:.0%} of their words agree, one is negated",
                ))  # fmt: skip
    return flags


def _slot_clashes(
    records: Mapping[int, Record], flagged: set[frozenset[str]]
) -> list[Contradiction]:
    """Active claims with a copula, identical in their content words but for one
    position, whose words there differ even folded (so "runs" and "running" agree)."""
    groups: dict[tuple[str, ...], dict[str, Record]] = {}
    for _, record in sorted(records.items()):
        tokens = tokenize(record.text)
        if record.status != "active" or not COPULAS & set(tokens) or NEGATIONS & set(tokens):
            continue
        words = tuple(content_words(tokens))
        if not MIN_SLOT_WORDS <= len(words) <= MAX_SLOT_WORDS:
            continue
        for i, word in enumerate(words):
            pattern = (*words[:i], "*", *words[i + 1 :])
            groups.setdefault(pattern, {}).setdefault(word, record)
    flags = []
    for pattern, fillers in sorted(groups.items()):
        values = sorted(fillers)
        for n, first in enumerate(values):
            for second in values[n + 1 :]:
                a, b = fillers[first], fillers[second]
                if frozenset((a.id, b.id)) in flagged:
                    continue
                flagged.add(frozenset((a.id, b.id)))
                flags.append(Contradiction(
                    "slot", a.id, b.id,
                    f"the same claim ({len(pattern) - 1} of {len(pattern)} words agree) "
                    f"with a different value: {first!r} vs {second!r}",
                ))  # fmt: skip
    return flags


def content_words(tokens: Iterable[str]) -> list[str]:
    """The folded content words of a token stream, in order: no stop words (negations
    are stop words too), no single letters."""
    return [fold_word(t) for t in tokens if t not in STOP_WORDS and len(t) > 1]


def _claim(text: str) -> set[str]:
    return {t for t in tokenize(text) if t in NEGATIONS or (t not in STOP_WORDS and len(t) > 1)}
