"""The words a memory shows for its concepts: each stem as the reader's scope wrote it.

Concepts are keyed by their stems (``retri``), which nobody wrote; results show the
spelling used most among the stem's newest uses in the reader's own layers
(``retrying``). Invariant: a shown word normalises back to its stem, so whatever a
result shows can be passed back (``feedback(query_concepts=...)``, ``graph(concepts=...)``)
and names the same concept; a stem with no such spelling there (a concept only
declared, or only asked) shows itself. Spellings are read from the reader's layers
alone, so no other agent's, project's or role's wording is ever shown.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from assocmem.text.concepts import normalize_concept
from assocmem.types import Scope

# Uses of a concept counted per layer, newest first: enough to say how people write
# it, and a bound on what a hub concept's spellings cost a read.
USES_COUNTED = 32
# Spellings chosen are kept, by stem and counts: a read shows every concept it reached,
# and the next read reaches many of the same, counted the same.
WORDS_KEPT = 4096


class Worded(Protocol):
    """What wording reads: concepts by name, and how the reader's layers spell them."""

    def concept_ids(self, names: Sequence[str]) -> dict[str, int]: ...

    def concept_forms(
        self, scope: Scope, concept_ids: Sequence[int], per_layer: int
    ) -> dict[int, dict[str, int]]: ...


def shown(
    store: Worded, scope: Scope, names: Mapping[int, str], stems: Iterable[str] = ()
) -> dict[str, str]:
    """The word shown for each stem: those of the concept ids ``names`` maps, and
    ``stems`` (looked up by name). One statement reads every spelling at once."""
    ids = dict(names) | {i: stem for stem, i in store.concept_ids(list(set(stems))).items()}
    wanted = {*names.values(), *stems}
    forms = store.concept_forms(scope, sorted(ids), USES_COUNTED) if ids else {}
    words = {stem: stem for stem in wanted}
    for concept_id, stem in ids.items():
        words[stem] = _kept_word(stem, tuple(forms.get(concept_id, {}).items()))
    return words


@functools.lru_cache(maxsize=WORDS_KEPT)
def _kept_word(stem: str, counts: tuple[tuple[str, int], ...]) -> str:
    return word(stem, dict(counts))


def word(stem: str, counts: Mapping[str, int]) -> str:
    """The spelling of ``stem`` written most, among those that normalise back to it.

    Spellings that differ only in case count together (a sentence's first word is
    capitalised by where it stands); within the winner, the spelling written most,
    a lower-case one on a tie. Ties between words go to the one that sorts first.
    """
    groups: dict[str, dict[str, int]] = {}
    for written, uses in counts.items():
        form = " ".join(written.split())
        if normalize_concept(form) == stem:
            spellings = groups.setdefault(form.casefold(), {})
            spellings[form] = spellings.get(form, 0) + uses
    if not groups:
        return stem
    best = min(groups, key=lambda folded: (-sum(groups[folded].values()), folded))
    spellings = groups[best]
    return min(spellings, key=lambda form: (-spellings[form], form != form.lower(), form))
