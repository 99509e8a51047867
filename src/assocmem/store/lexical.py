"""How a full-text search bounds its work: match counts read once per read, and
common terms ranked over a bounded slice of their postings.

A mixin of `SQLStore`. Ranking, not matching, is what a search pays per posting
(FTS5's bm25 and PostgreSQL's ts_rank read each matched row; a walk of a posting
list alone is ~40 ns an entry), and a word in a fifth of a million memories has
200,000 of them. So a term the index matches in `COMMON_POSTINGS` or more of the
reader's memories is ranked only where a memory also holds a rarer term of the same
search (its exact contribution there), and among the reader's newest
`LEXICAL_WINDOW` memories; its document frequency is its share of that window times
the reader's memories, so it is never counted past `COMMON_POSTINGS` either (a backend
that keeps per-term counts, PostgreSQL, looks the exact one up instead). A memory
holding only common terms is found when it is recent; one holding a rare term is
found wherever it is. Where no term is common, or the window holds every memory of
the reader, nothing changes: every posting is ranked and counted, as before.

Invariant: every statement is bounded by the reader's layers, so the counts, the
window and the scores are the reader's alone; nothing is remembered past the read
snapshot that asked for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from assocmem.store.connection import SQLConnection
from assocmem.store.params import in_list, translated
from assocmem.types import Scope

# A term matched by this many of the reader's memories is common. FTS5's bm25 ranks
# every row a term matches, so a term in tens of thousands of memories would cost a
# read more than all its other work; 2,000 postings bound a rare term's share of a
# read. A store under 2,000 memories never has a common term.
COMMON_POSTINGS = 2_000
# The newest memories of each readable layer in which common terms are ranked:
# the same order of work as one rare term, and enough to fill a read's fusion depth
# (FUSION_DEPTH_MIN = 50) from any term in 1 % of memories or more.
LEXICAL_WINDOW = 5_000


def common_terms(terms: Sequence[str], counts: dict[str, int]) -> set[str]:
    """The terms whose posting lists are too long to rank whole."""
    return {term for term in terms if counts.get(term, 0) >= COMMON_POSTINGS}


class LexicalBounds(SQLConnection):
    """Match counts and the recent window of the full-text search (mixed into `SQLStore`)."""

    size: Callable[[Scope], int]

    def _count_matches(
        self, layers: Sequence[int], terms: Sequence[str], cap: int, after: int = 0
    ) -> dict[str, int]:
        """How many memories of ``layers`` with a seq over ``after`` the index matches
        for each term, counted up to ``cap``."""
        raise NotImplementedError

    def _exact_counts(self, layers: Sequence[int], terms: Sequence[str]) -> dict[str, int]:
        """The terms whose memories in ``layers`` (any status) the store keeps counted,
        with those counts; the rest are counted (and estimated) by `_frequencies`."""
        return {}

    @translated
    def match_counts(self, scope: Scope, terms: Sequence[str], cap: int) -> dict[str, int]:
        frequencies = self._frequencies(scope, terms)
        return {term: min(frequencies[term], cap) for term in terms}

    def _frequencies(self, scope: Scope, terms: Sequence[str]) -> dict[str, int]:
        """How many memories of the reader's layers (any status) the index matches for
        each term: exact where the store keeps it counted (`_exact_counts`); else
        counted under `COMMON_POSTINGS`, and at or over it estimated from the term's
        share of the window (exact when the window holds every memory), and never put
        under it."""
        layers = self._layers(scope)
        if not layers:
            return dict.fromkeys(terms, 0)
        memo = self._memo(("frequencies", tuple(layers)))
        known = memo if memo is not None else {}
        missing = [term for term in dict.fromkeys(terms) if term not in known]
        exact = self._exact_counts(layers, missing) if missing else {}
        rest = [term for term in missing if term not in exact]
        found = self._count_matches(layers, rest, COMMON_POSTINGS) if rest else {}
        common = [term for term, count in found.items() if count >= COMMON_POSTINGS]
        if common:
            start, recent = self._window(layers)
            docs = self.size(scope)
            shares = self._count_matches(layers, common, LEXICAL_WINDOW * len(layers), start)
            found.update(
                (term, max(COMMON_POSTINGS, round(shares[term] * docs / max(1, recent))))
                for term in common
            )
        known.update(found)
        known.update(exact)
        return {term: int(known[term]) for term in terms}

    def _window(self, layers: Sequence[int]) -> tuple[int, int]:
        """The seq after which lie the newest `LEXICAL_WINDOW` memories of the layer
        written latest and at most as many of each other layer (0: every memory of
        ``layers``), and how many memories of the layers lie after it."""
        window: tuple[int, int] = self._remembered(
            ("window", tuple(layers)), lambda: self._find_window(layers)
        )
        return window

    def _find_window(self, layers: Sequence[int]) -> tuple[int, int]:
        """`_window`, worked out: one statement per layer, then the count."""
        start = 0
        for layer in layers:
            rows = self._query(
                "SELECT seq FROM memories WHERE scope_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?",
                [layer, LEXICAL_WINDOW],
            )
            start = max(start, int(rows[0][0]) if rows else 0)
        (inside,) = self._query(
            f"SELECT COUNT(*) FROM memories WHERE {in_list('scope_id', layers)} AND seq > ?",
            [*layers, start],
        )[0]
        return int(start), int(inside)
