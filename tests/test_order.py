"""Best-first orders: highest score first, ties on the key, either way round; and
rows of (key, weight) heaviest first, in place."""

from __future__ import annotations

import random

from assocmem.order import best_first, heaviest_first


def test_scores_rank_highest_first_and_ties_follow_the_keys() -> None:
    scores = {4: 1.0, 2: 3.0, 9: 1.0, 7: 3.0, 1: 0.5}
    assert best_first(scores) == [2, 7, 4, 9, 1]
    assert best_first(scores, higher_keys_first=True) == [7, 2, 9, 4, 1]
    assert best_first(scores, 3) == [2, 7, 4]
    assert best_first({}) == []


def test_the_order_is_that_of_sorting_score_and_key_together() -> None:
    rng = random.Random(7)
    for _ in range(200):
        scores = {rng.randrange(1000): float(rng.randrange(5)) for _ in range(rng.randrange(60))}
        limit = rng.randrange(1, 40)
        assert best_first(scores, limit) == sorted(scores, key=lambda k: (-scores[k], k))[:limit]
        newest = sorted(scores, key=lambda k: (-scores[k], -k))[:limit]
        assert best_first(scores, limit, higher_keys_first=True) == newest


def test_rows_sort_heaviest_first_in_place_as_sorting_weight_and_key_together() -> None:
    rng = random.Random(11)
    for _ in range(200):
        rows = [(rng.randrange(50), float(rng.randrange(4))) for _ in range(rng.randrange(40))]
        expected = sorted(rows, key=lambda row: (-row[1], row[0]))
        assert heaviest_first(rows) is rows
        assert rows == expected
    pairs = [((2, 5), 1.0), ((1, 9), 2.0), ((1, 3), 1.0)]
    assert heaviest_first(pairs) == [((1, 9), 2.0), ((1, 3), 1.0), ((2, 5), 1.0)]
