"""A store whose concepts were folded another way is refolded once when it opens:
concepts that now share a name merge into the lowest id, and what their memories,
links and lessons held is summed exactly, on both backends."""

from __future__ import annotations

import contextlib
import sqlite3
from collections import defaultdict
from typing import Any

import pytest

from assocmem import Memory
from assocmem.store import refold
from assocmem.store.refold import plan
from assocmem.text.concepts import FOLDING
from tests.conftest import Target, raw_query

# Each note's concepts are placeholders that fold to themselves (a hyphenated word
# passes through), renamed below to what the old rule set made of each spelling.
OLD_NOTES = (
    ("I kept seeing the cache expired.", ["old-se", "cache", "old-expir"]),
    ("We see the cache expire again.", ["old-see", "cache", "old-expire"]),
    ("Seeing it, see it: the cache again.", ["old-se", "old-see", "cache"]),
)
# What the old folding named each concept, and the spelling its memories carry.
OLD_NAMES = {
    "old-se": "se",
    "old-see": "see",
    "old-expir": "expir",
    "old-expire": "expire",
    "old-retry": "retry",  # named only by feedback: no memory carries it
    "cach": "cache",  # a rename with nothing to merge
}
SPELLINGS = {"old-se": "seeing", "old-see": "see", "old-expir": "expired", "old-expire": "expire"}


# A store of the old folding wrote every spelling out, even one equal to its name.
SPELLED_OUT = (
    "UPDATE memory_concepts SET form = (SELECT c.name FROM concepts c"
    " WHERE c.id = memory_concepts.concept_id) WHERE form = ''"
)


def _rewrite(target: str, sql: str) -> None:
    """Run one write statement directly on the store's database, committed."""
    if target.startswith("postgresql://"):
        raw_query(target, sql)  # an autocommit connection
        return
    with contextlib.closing(sqlite3.connect(target)) as conn, conn:
        conn.execute(sql)


def _old_store(target: str) -> list[str]:
    """Write the notes and feedback, then rewrite concept names and spellings as the
    old folding left them, and drop the folding marker; the notes' ids."""
    with Memory(target, agent_id="ops") as mem:
        ids = [mem.write(text, concepts=c).id or "" for text, c in OLD_NOTES]
        mem.feedback([ids[0]], 1.0, query_concepts=["old-se"])
        mem.feedback([ids[1]], -0.5, query_concepts=["old-see", "old-retry"])
        # Both wordings taught the third note something: its lessons merge too.
        mem.feedback([ids[2]], 0.5, query_concepts=["old-retry", "old-se", "old-see"])
    _rewrite(target, SPELLED_OUT)
    for current, name in OLD_NAMES.items():
        _rewrite(target, f"UPDATE concepts SET name = '{name}' WHERE name = '{current}'")
    for placeholder, form in SPELLINGS.items():
        _rewrite(target, f"UPDATE memory_concepts SET form = '{form}' WHERE form = '{placeholder}'")
    _rewrite(target, "DELETE FROM store_info WHERE key = 'concept_fold'")
    return ids


def _tables(target: str) -> set[str]:
    if target.startswith("postgresql://"):
        sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
    else:
        sql = "SELECT name FROM sqlite_master WHERE type = 'table'"
    return {name for (name,) in raw_query(target, sql)}


def _links(target: str) -> dict[tuple[int, int, int], list[Any]]:
    """(scope, a, b) -> [weight, count, outcome_sum, feedback_count, updated_at], with
    what is pending (SQLite) folded in as a fold would."""
    found = {
        (s, a, b): [w, c, o, f, u]
        for s, a, b, w, c, o, f, u in raw_query(target, "SELECT * FROM links")
    }
    if "pending_links" in _tables(target):
        for s, a, b, count, at, moved, outcome in raw_query(
            target, "SELECT scope_id, a, b, count, at, moved, outcome FROM pending_pairs"
        ):
            row = found.setdefault((s, a, b), [0.0, 0, 0.0, 0, at])
            row[0] += count + (moved or 0.0)
            row[1] += count
            row[2] += outcome or 0.0
            row[3] += outcome is not None
            row[4] = max(row[4], at)
    return found


def _rekeyed(
    links: dict[tuple[int, int, int], list[Any]], merged: dict[int, int]
) -> dict[tuple[int, int, int], list[Any]]:
    """The links as a refold should leave them: ends mapped, pairs summed, loops dropped."""
    out: dict[tuple[int, int, int], list[Any]] = {}
    for (s, a, b), (w, c, o, f, u) in links.items():
        na, nb = merged.get(a, a), merged.get(b, b)
        if na == nb:
            continue
        row = out.setdefault((s, min(na, nb), max(na, nb)), [0.0, 0, 0.0, 0, u])
        row[0] += w
        row[1] += c
        row[2] += o
        row[3] += f
        row[4] = max(row[4], u)
    return out


def _lessons(target: str) -> dict[tuple[int, int, int], list[Any]]:
    if "lessons" not in _tables(target):
        return {}
    return {
        (s, c, m): [w, o, u]
        for s, c, m, w, o, u in raw_query(
            target,
            "SELECT scope_id, concept_id, memory_seq, weight, outcomes, updated_at FROM lessons",
        )
    }


def _taught(target: str) -> dict[tuple[int, int], float]:
    if "lesson_concepts" not in _tables(target):
        return {}
    return {(s, c): t for s, c, t in raw_query(target, "SELECT * FROM lesson_concepts")}


def _summed(
    taught: dict[tuple[int, int], float], merged: dict[int, int]
) -> dict[tuple[int, int], float]:
    out: dict[tuple[int, int], float] = defaultdict(float)
    for (s, c), t in taught.items():
        out[(s, merged.get(c, c))] += t
    return dict(out)


def _snapshot(target: str) -> tuple[Any, ...]:
    return (
        sorted(raw_query(target, "SELECT id, name FROM concepts")),
        sorted(raw_query(target, "SELECT * FROM memory_concepts")),
        _links(target),
        _lessons(target),
        _taught(target),
        sorted(raw_query(target, "SELECT key, value FROM store_info")),
    )


@pytest.fixture
def old(store_target: Target) -> tuple[str, list[str], dict[str, int]]:
    """An old-folded store, its notes' ids and its concept ids by old name."""
    target = store_target()
    ids = _old_store(target)
    return (
        target,
        ids,
        {name: cid for cid, name in raw_query(target, "SELECT id, name FROM concepts")},
    )


def test_a_new_store_is_marked_with_the_folding_it_was_made_with(store_target: Target) -> None:
    target = store_target()
    Memory(target, agent_id="ops").close()
    assert raw_query(target, "SELECT value FROM store_info WHERE key = 'concept_fold'") == [
        (FOLDING,)
    ]


def test_concepts_that_now_share_a_name_merge_into_the_lowest_id(old: Any) -> None:
    target, _, by_name = old
    Memory(target, agent_id="ops").close()
    names = dict(raw_query(target, "SELECT name, id FROM concepts"))
    assert names == {
        "see": min(by_name["se"], by_name["see"]),
        "expir": min(by_name["expir"], by_name["expire"]),
        "cach": by_name["cache"],
        "retri": by_name["retry"],
    }
    assert raw_query(target, "SELECT value FROM store_info WHERE key = 'concept_fold'") == [
        (FOLDING,)
    ]


def test_links_and_lessons_are_summed_exactly(old: Any) -> None:
    target, _, by_name = old
    see, expir = min(by_name["se"], by_name["see"]), min(by_name["expir"], by_name["expire"])
    merged = {
        by_name["se"]: see, by_name["see"]: see,
        by_name["expir"]: expir, by_name["expire"]: expir,
    }  # fmt: skip
    links, lessons, taught = _links(target), _lessons(target), _taught(target)
    Memory(target, agent_id="ops").close()
    after = _links(target)
    expected_links = _rekeyed(links, merged)
    layer = next(iter(expected_links))[0]
    pair = (layer, min(see, by_name["cache"]), max(see, by_name["cache"]))
    expected_links[pair][0] -= 1  # the third note's pair, counted once (see above)
    expected_links[pair][1] -= 1
    assert after == expected_links
    assert all(a < b for _, a, b in after)
    if "pending_links" in _tables(target):
        assert raw_query(target, "SELECT COUNT(*) FROM pending_links") == [(0,)]
    # Written by hand: co-occurrence of (see, cache) in all three notes, once each: the
    # third carried both "seeing" and "see", and its (se, see) pair is gone.
    assert _count(target, see, by_name["cache"]) == 3
    expected: dict[tuple[int, int, int], list[Any]] = defaultdict(lambda: [0.0, 0, 0])
    for (s, c, m), (w, o, u) in lessons.items():
        row = expected[(s, merged.get(c, c), m)]
        row[0] += w
        row[1] += o
        row[2] = max(row[2], u)
    assert _lessons(target) == dict(expected)
    assert _taught(target) == _summed(taught, merged)


def _count(target: str, a: int, b: int) -> int:
    [(count,)] = raw_query(
        target,
        f"SELECT COALESCE(SUM(count), 0) FROM links WHERE a = {min(a, b)} AND b = {max(a, b)}",
    )
    return int(count)


def test_forgetting_a_memory_that_carried_both_spellings_takes_back_all_it_counted(
    old: Any,
) -> None:
    target, ids, by_name = old
    see = min(by_name["se"], by_name["see"])
    with Memory(target, agent_id="ops") as mem:
        mem.forget([ids[2]])
        edges = {e.target: e.count for e in mem.graph(["see"]).edges}
    assert _count(target, see, by_name["cache"]) == 2
    assert edges["cache"] == 2


def test_each_memory_keeps_one_row_per_concept_and_its_spelling(old: Any) -> None:
    target, ids, _ = old
    with Memory(target, agent_id="ops") as mem:
        records = {r.id: r for r in mem.get(ids)}
    first, second, third = (records[i] for i in ids)
    assert (first.concepts, first.concept_forms) == (
        ("see", "cach", "expir"), ("seeing", "cache", "expired"),
    )  # fmt: skip
    assert (second.concepts, second.concept_forms) == (
        ("see", "cach", "expir"), ("see", "cache", "expire"),
    )  # fmt: skip
    # The third carried both "seeing" and "see": the one it listed first stays.
    assert (third.concepts, third.concept_forms) == (("see", "cach"), ("seeing", "cache"))


def test_a_spelling_equal_to_its_name_survives_the_name_changing(
    store_target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = store_target()
    with Memory(target, agent_id="ops") as mem:
        ids = [mem.write(f"note {word}", concepts=[word]).id or "" for word in ("timeout", "timer")]
    # Both rows hold no spelling of their own: each wrote its concept as its name.
    assert raw_query(target, "SELECT COUNT(*) FROM memory_concepts WHERE form = ''") == [(2,)]
    # A folding that keeps three letters renames one concept and merges the other in.
    monkeypatch.setattr(refold, "FOLDING", "three-letters")
    monkeypatch.setattr(refold, "normalize_concept", lambda spelling: spelling.lower()[:3])
    with Memory(target, agent_id="ops") as mem:
        records = {r.id: r for r in mem.get(ids)}
    assert [(records[i].concepts, records[i].concept_forms) for i in ids] == [
        (("tim",), ("timeout",)), (("tim",), ("timer",)),
    ]  # fmt: skip


@pytest.mark.parametrize("wording", ["see", "seeing", "sees"])
def test_a_read_by_either_wording_finds_the_merged_memories(old: Any, wording: str) -> None:
    target, ids, _ = old
    with Memory(target, agent_id="ops") as mem:
        assert {item.id for item in mem.read(concepts=[wording]).items} >= set(ids)
        assert {item.id for item in mem.read(concepts=["expire"]).items} >= set(ids[:2])
        edges = {(e.source, e.target): e.count for e in mem.graph([wording]).edges}
    assert edges[("seeing", "cache")] == 3  # shown as written most


def test_a_second_open_changes_nothing(old: Any) -> None:
    target, _, _ = old
    Memory(target, agent_id="ops").close()
    refolded = _snapshot(target)
    Memory(target, agent_id="ops").close()
    assert _snapshot(target) == refolded


def test_concepts_may_trade_names(store_target: Target) -> None:
    target = store_target()
    with Memory(target, agent_id="ops") as mem:
        mem.write("a note", concepts=["old-a", "old-b"])
    _rewrite(target, SPELLED_OUT)
    for placeholder, name, form in (("old-a", "timeout", "seeing"), ("old-b", "see", "timeouts")):
        _rewrite(target, f"UPDATE concepts SET name = '{name}' WHERE name = '{placeholder}'")
        _rewrite(target, f"UPDATE memory_concepts SET form = '{form}' WHERE form = '{placeholder}'")
    _rewrite(target, "DELETE FROM store_info WHERE key = 'concept_fold'")
    before = dict(raw_query(target, "SELECT name, id FROM concepts"))
    Memory(target, agent_id="ops").close()
    after = dict(raw_query(target, "SELECT name, id FROM concepts"))
    assert after == {"see": before["timeout"], "timeout": before["see"]}


@pytest.mark.parametrize(
    ("names", "forms", "merged", "renamed"),
    [
        # The spelling most memories carry names the concept; a tie goes to the smallest.
        ({1: "x"}, [(1, "Timeouts", 3), (1, "seeing", 2)], {}, {1: "timeout"}),
        ({1: "x"}, [(1, "seeing", 2), (1, "Seen", 2)], {}, {1: "seen"}),
        # Without memories the old name is refolded; the lowest id survives a merge.
        ({5: "retry", 2: "retries"}, [], {5: 2}, {2: "retri"}),
        ({1: "retri", 3: "retry"}, [], {3: 1}, {}),
        ({1: "timeout"}, [(1, "timeout", 1)], {}, {}),
    ],
)
def test_plan(
    names: dict[int, str],
    forms: list[tuple[int, str, int]],
    merged: dict[int, int],
    renamed: dict[int, str],
) -> None:
    assert plan(names, forms) == (merged, renamed)


def test_stats_count_each_linked_pair_once_after_a_refold(old: Any) -> None:
    target, _, _ = old
    with Memory(target, agent_id="ops") as mem:
        exported = {
            frozenset((line["a"], line["b"]))
            for line in mem.export_all()
            if line.get("line") == "link"
        }
        assert mem.stats().links == len(exported)
