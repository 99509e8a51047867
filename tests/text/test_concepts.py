"""Concept normalisation and extraction are pure and deterministic."""

from __future__ import annotations

import threading

import pytest

from assocmem.text import concepts
from assocmem.text.concepts import extract_concepts, fold_word, normalize_concept, normalize_text


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("timeouts", "timeout"),
        ("Timeouts", "timeout"),
        ("TIMEOUT", "timeout"),
        ("timeout", "timeout"),
        ("retries", "retri"),
        ("retried", "retri"),
        ("retry", "retri"),
        ("deployed", "deploy"),
        ("deploying", "deploy"),
        ("deployment", "deploy"),
        ("caches", "cach"),
        ("cache", "cach"),
        ("processes", "process"),
        ("boxes", "box"),
        ("status", "status"),
        ("speed", "speed"),
        ("embedding", "embed"),
        ("stopped", "stop"),
        ("timing", "time"),
        ("timed", "time"),
        ("seeing", "see"),
        ("see", "see"),
        ("expired", "expir"),
        ("expire", "expir"),
        ("  rate   limits ", "rate limit"),  # word by word
        ("ｔｉｍｅｏｕｔｓ", "timeout"),  # full-width forms fold under NFKC
        ("Straße", "strass"),  # case-fold (ss), not lower(), then the stem
    ],
)
def test_normalize_concept(given: str, expected: str) -> None:
    assert normalize_concept(given) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        # Identifiers with digits, hyphens or dots are names, not inflections.
        ("v2.1", "v2.1"),
        ("e-mail", "e-mail"),
        ("gpt-4o", "gpt-4o"),
        ("k8s", "k8s"),
        ("python3", "python3"),
        ("2024", "2024"),
        # Snowball reads possessives, and curly apostrophes read as straight ones.
        ("user's", "user"),
        ("user’s", "user"),
        ("don't", "don't"),
        ("don’t", "don't"),
        # Other scripts pass through; Latin letters with marks take English suffixes off.
        ("ミズアイ", "ミズアイ"),
        ("москва", "москва"),
        ("cafés", "café"),
        ("résumés", "résumé"),
    ],
)
def test_fold_word_on_identifiers_and_other_scripts(word: str, expected: str) -> None:
    assert fold_word(word) == expected


def test_each_thread_folds_with_its_own_stemmer() -> None:
    # A stemmer must not be called from two threads at once; every thread's agrees.
    words = [s + e for s in ("retr", "deploy", "tim") for e in ("ies", "ed", "ing", "es")]
    expected = [fold_word.__wrapped__(w) for w in words] * 200
    stemmers: list[object] = []
    folded: list[list[str]] = []

    def fold_all() -> None:
        stemmers.append(concepts._stemmer())
        folded.append([fold_word.__wrapped__(w) for w in words * 200])  # past the cache

    threads = [threading.Thread(target=fold_all) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(s) for s in stemmers}) == 8
    assert folded == [expected] * 8


def test_normalize_text_collapses_whitespace() -> None:
    assert normalize_text("  A\tB\n\nC  ") == "a b c"


def test_extract_concepts_drops_stop_words_and_keeps_original_forms() -> None:
    pairs = extract_concepts("The deploys timed out after THE Release, twice in 2024!")
    assert [n for n, _ in pairs] == ["deploy", "time", "releas", "twice"]
    assert dict(pairs)["deploy"] == "deploys"
    assert dict(pairs)["releas"] == "Release"


def test_extract_concepts_meets_caller_given_concepts() -> None:
    pairs = dict(extract_concepts("Retried after the timeouts; seeing it expire again."))
    for given in ("retry", "timeout", "see", "expired"):
        assert normalize_concept(given) in pairs


def test_extract_concepts_is_deterministic_and_bounded() -> None:
    text = " ".join(f"word{i}x" for i in range(100))
    assert extract_concepts(text) == extract_concepts(text)
    assert len(extract_concepts(text, limit=5)) == 5
