"""Fusion, decay and the other folds are pure functions."""

from __future__ import annotations

import pytest

from assocmem.recall import fusion
from assocmem.recall.filters import boost


def test_rrf_sums_weighted_reciprocal_ranks() -> None:
    fused = fusion.rrf(
        {"lexical": [1, 2, 3], "semantic": [3, 1]}, weights={"lexical": 1.0, "semantic": 1.0}, k=60
    )
    scores = {f.key: f.score for f in fused}
    assert scores[1] == pytest.approx(1 / 61 + 1 / 62)
    assert scores[3] == pytest.approx(1 / 63 + 1 / 61)
    assert [f.key for f in fused] == [1, 3, 2]
    assert fused[0].ranks == {"lexical": 1, "semantic": 2}


def test_rrf_names_the_best_arm_and_breaks_ties_on_key() -> None:
    fused = fusion.rrf({"semantic": [7], "lexical": [7]}, weights={}, k=60)
    assert fused[0].source == "lexical"  # equal rank: the earlier arm in ARM_ORDER
    tied = fusion.rrf({"lexical": [5], "semantic": [4]}, weights={}, k=60)
    assert [f.key for f in tied] == [4, 5]


def test_rrf_weights_scale_votes() -> None:
    fused = fusion.rrf({"lexical": [1], "thread": [2]}, weights={"lexical": 1.0, "thread": 0.5})
    assert fused[0].key == 1 and fused[1].score == pytest.approx(0.5 / 61)


@pytest.mark.parametrize("limit", [1, 5, 40, 400])
def test_the_best_few_are_the_head_of_the_whole_order(limit: int) -> None:
    # Few keys per place taken are sorted, many are walked by a heap: the same order.
    votes: fusion.Fusion[int] = fusion.Fusion()
    votes.add({
        "lexical": [k * 7 % 101 for k in range(100)],
        "semantic": [k * 13 % 101 for k in range(60)],
        "thread": list(range(100, 0, -3)),
    })  # fmt: skip
    whole = votes.ranked()
    assert votes.leaders(limit) == [(f.key, f.score) for f in whole[:limit]]
    assert votes.ranked(limit) == whole[:limit]
    assert [votes.fused(f.key) for f in whole] == whole


@pytest.mark.parametrize(
    ("kind", "days", "remaining"),
    [("episodic", 0, 1.0), ("episodic", 7, 0.5), ("episodic", 14, 0.25),
     ("semantic", 180, 0.5), ("procedural", 3650, 0.5), ("working", 1, 0.5),
     ("episodic", -3, 1.0)],
)  # fmt: skip
def test_decay_halves_per_half_life(kind: str, days: float, remaining: float) -> None:
    assert fusion.decay(kind, days) == pytest.approx(remaining)


def test_folds_are_bounded() -> None:
    assert fusion.decay_factor(1.0) == 1.0
    assert fusion.decay_factor(0.0) == pytest.approx(0.9)
    assert fusion.valence_factor(1.0) == 1.0  # good outcomes lift through lessons only
    assert fusion.valence_factor(-0.5) == pytest.approx(0.95)
    assert fusion.valence_factor(-5.0) == pytest.approx(0.9)
    assert fusion.value_factor(1.0) == 1.0
    assert fusion.value_factor(3.0) == pytest.approx(2**0.25)
    assert fusion.value_factor(0.0) < 1.0
    assert fusion.question_factor(0.0) == 1.0
    assert fusion.question_factor(1.0) == pytest.approx(0.9)
    assert fusion.question_factor(7.0) == pytest.approx(0.9)


@pytest.mark.parametrize(
    ("text", "share"),
    [("The deploy failed at noon.", 0.0), ("Did the deploy fail?", 1.0),
     ("It failed. Why did it fail?", 4 / 6), ("Maria: wow! what kind is it?", 4 / 6),
     ("How do I reset it? Hold the button.", 0.0), ("Really?! Yes.", 0.0),
     ("Hm? Why? How?", 1.0), ("What is it? [a photo of a mat]", 0.0),
     ("no marks at all", 0.0), ("?", 0.0), ("デプロイは失敗しましたか？", 1.0), ("", 0.0)],
)  # fmt: skip
def test_question_share_counts_the_words_of_closing_questions(text: str, share: float) -> None:
    assert fusion.question_share(text) == pytest.approx(share)


def test_access_resets_only_within_the_window() -> None:
    assert fusion.resets_clock("episodic", 3)
    assert not fusion.resets_clock("episodic", 8)
    assert fusion.resets_clock("semantic", 100)
    assert not fusion.resets_clock("episodic", 0.01)  # the clock has barely moved


def test_thread_smoothing_spreads_what_stands_out() -> None:
    # memory 2 answers memory 1; memory 3 follows the answer.
    scores = {1: 10.0, 2: 0.0, 3: 0.0, 9: 0.0}
    adjacency = {1: (None, 2), 2: (1, 3), 3: (2, None)}
    smoothed = fusion.smooth_along_threads(scores, adjacency, forward=0.5, backward=0.25)
    assert smoothed[1] == pytest.approx(10.0)
    assert smoothed[2] == pytest.approx(5.0)  # half of what its prompt scored
    assert smoothed[3] == 0.0


def test_thread_smoothing_subtracts_the_background() -> None:
    scores = {1: 0.9, 2: 0.3, 3: 0.3, 4: 0.3}
    adjacency = {1: (None, 2), 2: (1, None)}
    smoothed = fusion.smooth_along_threads(scores, adjacency, forward=0.5, backward=0.0)
    assert smoothed[2] == pytest.approx(0.5 * (0.9 - 0.3))
    assert smoothed[3] == 0.0


def test_extracted_concepts_vote_less_than_given_ones() -> None:
    given, extracted = fusion.arm_weights(True), fusion.arm_weights(False)
    assert extracted["concept_scoped"] < given["concept_scoped"]
    assert extracted["lexical"] == given["lexical"]


def test_prefer_boost_is_a_capped_product() -> None:
    assert boost([], 2.0) == 1.0
    assert boost([0.5], 2.0) == 1.5
    assert boost([0.5, 0.5], 3.0) == pytest.approx(2.25)
    assert boost([1.0, 1.0], 2.0) == 2.0
