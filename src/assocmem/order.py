"""Best-first orders of scored keys, ties broken on the key.

Every ranking a read makes (an arm's hits, the fusion's leaders) orders keys by
score, highest first, and equal scores by the key, so the same inputs always give
the same order. Sorting ``(-score, key)`` tuples compares tuples element by element
in Python; two stable sorts, the keys by themselves and then by their float scores,
give the same order with every comparison made in C.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter
from typing import TypeVar

K = TypeVar("K", int, str, tuple[int, int])

_KEY, _WEIGHT = itemgetter(0), itemgetter(1)


def best_first(
    scores: Mapping[K, float], limit: int | None = None, *, higher_keys_first: bool = False
) -> list[K]:
    """The keys of ``scores``, highest score first and equal scores in ascending key
    order (descending with ``higher_keys_first``: the newest memory first); the best
    ``limit`` of them, if given."""
    keys = sorted(scores, reverse=higher_keys_first)
    # A stable sort, reversed or not, keeps equal scores in the keys' order.
    keys.sort(key=scores.__getitem__, reverse=True)
    return keys if limit is None else keys[:limit]


def heaviest_first(rows: list[tuple[K, float]]) -> list[tuple[K, float]]:
    """``rows`` of ``(key, weight)`` sorted in place, and returned: highest weight first,
    equal weights in ascending key order (the order of sorting ``(-weight, key)``)."""
    rows.sort(key=_KEY)
    rows.sort(key=_WEIGHT, reverse=True)
    return rows
