"""Canonical sources by the Public Suffix List, and the re-canonicalisation of old stores."""

from __future__ import annotations

import sqlite3

import pytest

from assocmem import Memory
from assocmem.text.sources import SOURCE_CANON, canonical_source, distinct_origins
from tests.conftest import Target


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("docs.example.com", "example.com"),
        ("https://docs.example.com/page", "http://www.example.com"),
        ("https://en.wikipedia.org/wiki/X", "wikipedia.org"),
        ("http://www.bbc.co.uk/news", "bbc.co.uk"),
    ],
)
def test_hosts_of_one_registrable_domain_are_one_source(a: str, b: str) -> None:
    assert canonical_source(a) == canonical_source(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("docs.example.com", "forum.example.net"),
        ("alice.github.io", "bob.github.io"),  # a private suffix: each site its own
        ("bbc.co.uk", "bbc.com"),
    ],
)
def test_sites_that_share_a_label_stay_apart(a: str, b: str) -> None:
    assert canonical_source(a) != canonical_source(b)
    assert len(distinct_origins([canonical_source(a), canonical_source(b)])) == 2


def test_a_name_meets_the_one_domain_it_names() -> None:
    variants = ["https://en.wikipedia.org/wiki/X", "wikipedia.org", "Wikipedia"]
    assert distinct_origins(canonical_source(v) for v in variants) == {"wikipedia.org"}


def test_a_name_with_two_candidate_domains_is_left_its_own() -> None:
    found = distinct_origins(["example.com", "example.net", "example"])
    assert found == {"example.com", "example.net", "example"}


def test_names_are_normalised_text_and_none_stays_none() -> None:
    assert canonical_source("  The  Runbook ") == "the runbook"
    assert canonical_source("github.io") == "github.io"  # a bare public suffix
    assert canonical_source(None) is None
    assert distinct_origins([None, None]) == set()


def _raw(target: str, *statements: str) -> list[tuple[object, ...]]:
    """Run SQL straight on the store's database, as an older assocmem would have left it."""
    rows: list[tuple[object, ...]] = []
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            for statement in statements:
                cursor = conn.execute(statement)
                rows = list(cursor.fetchall()) if cursor.description else rows
        return rows
    with sqlite3.connect(target) as raw:
        for statement in statements:
            rows = raw.execute(statement).fetchall() or rows
    return rows


def test_an_old_store_is_recanonicalised_once_on_open(store_target: Target) -> None:
    target = store_target()
    with Memory(target, agent_id="a") as mem:
        first = mem.write("a fact", source="https://docs.example.com/x").id
        named = mem.write("a name", source="Wikipedia").id
        assert first and named
    # The label-only canonical form an older assocmem wrote, and no rule recorded.
    _raw(
        target,
        "UPDATE memories SET source_canonical = 'example' WHERE source LIKE 'https%'",
        "DELETE FROM store_info WHERE key = 'source_canon'",
    )
    with Memory(target, agent_id="a") as mem:
        found = [r.source_canonical for r in mem.get([first, named])]
    assert found == ["example.com", "wikipedia"]
    rule = _raw(target, "SELECT value FROM store_info WHERE key = 'source_canon'")
    assert rule == [(SOURCE_CANON,)]
