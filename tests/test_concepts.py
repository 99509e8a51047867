"""Concept normalisation and extraction are pure and deterministic."""

from __future__ import annotations

import pytest

from assocmem.concepts import extract_concepts, normalize_concept, normalize_text


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("timeouts", "timeout"),
        ("Timeouts", "timeout"),
        ("TIMEOUT", "timeout"),
        ("retries", "retry"),
        ("retried", "retry"),
        ("deployed", "deploy"),
        ("deploying", "deploy"),
        ("caches", "cache"),
        ("processes", "process"),
        ("boxes", "box"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("speed", "speed"),
        ("embed", "embed"),
        ("embedding", "embed"),
        ("stopped", "stop"),
        ("timing", "time"),
        ("  rate   limits ", "rate limit"),
        ("ｔｉｍｅｏｕｔｓ", "timeout"),  # full-width forms fold under NFKC
        ("Straße", "strasse"),  # case-fold, not lower()
        ("ミズアイ", "ミズアイ"),  # other scripts pass through unfolded
        ("gpt-4o", "gpt-4o"),
    ],
)
def test_normalize_concept(given: str, expected: str) -> None:
    assert normalize_concept(given) == expected


def test_normalize_text_collapses_whitespace() -> None:
    assert normalize_text("  A\tB\n\nC  ") == "a b c"


def test_extract_concepts_drops_stop_words_and_keeps_original_forms() -> None:
    pairs = extract_concepts("The deploys timed out after THE Release, twice in 2024!")
    assert [n for n, _ in pairs] == ["deploy", "timed", "release", "twice"]
    assert dict(pairs)["deploy"] == "deploys"
    assert dict(pairs)["release"] == "Release"


def test_extract_concepts_is_deterministic_and_bounded() -> None:
    text = " ".join(f"word{i}x" for i in range(100))
    assert extract_concepts(text) == extract_concepts(text)
    assert len(extract_concepts(text, limit=5)) == 5
