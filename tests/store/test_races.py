"""Writes by id racing `forget` (issue 38, item 6): two connections to one store, the
one changing a memory by id while the other forgets it, round after round.

Each write either commits first (and did all it says) or finds the memory gone
(`UnknownMemory`); the forget always leaves no trace of it. Never an untyped error,
never a row brought back, never half an update, never a row naming the dead memory.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import pytest

from assocmem import Memory
from assocmem.errors import UnknownMemory
from assocmem.lifecycle.types import Lifecycle
from assocmem.types import Record
from tests.conftest import Target, raw_query

# Rounds per write and backend: enough that each fix's race showed up on the code
# before it in most runs; ASSOCMEM_RACE_ROUNDS=150 gives the measure.
ROUNDS = int(os.environ.get("ASSOCMEM_RACE_ROUNDS", "50"))
# Every table that names a memory by its sequence: a row left in one after the
# forget is a trace of it (and, where SQLite hands the sequence out again, a row
# that would belong to the next memory written).
TRACES = (
    ("memory_concepts", "memory_seq"),
    ("vectors", "memory_seq"),
    ("entity_mentions", "memory_seq"),
    ("relations", "anchor_seq"),
    ("feedback_items", "memory_seq"),
    ("lessons", "memory_seq"),
    ("trust_credits", "memory_seq"),
    ("trust_taint", "memory_seq"),
    ("trust_slashes", "memory_seq"),
    ("trust_attestations", "memory_seq"),
    ("graduations", "memory_seq"),
)


def _changed_it(result: Any, memory_id: str) -> bool:
    return isinstance(result, Lifecycle) and result.changed == (memory_id,)


def _updated(result: Any, memory_id: str) -> bool:
    return (
        isinstance(result, Record)
        and result.id == memory_id
        and result.tags == ("raced",)
        and result.value == 2.0
    )


def _moved(result: Any, memory_id: str) -> bool:
    return isinstance(result, Record) and result.id == memory_id and result.access == ("ops",)


# name -> (the write by id, what its result must show when it committed first)
WRITES: dict[str, tuple[Callable[[Memory, str], Any], Callable[[Any, str], bool]]] = {
    "update": (lambda m, i: m.update(i, tags=["raced"], value=2.0), _updated),
    "update_access": (lambda m, i: m.update(i, access=["ops"]), _moved),
    "archive": (lambda m, i: m.archive([i]), _changed_it),
    "protect": (lambda m, i: m.protect([i]), _changed_it),
    "credit": (lambda m, i: m.credit([i], "good"), lambda r, _: r == 1),
    "slash": (lambda m, i: m.slash([i], scope="memory"), _changed_it),
    "monitor": (lambda m, i: m.monitor([i], "bad"), lambda r, i: r.credited == (i,)),
    "ratify": (
        lambda m, i: m.ratify(i, "audit", "an-auditor"),
        lambda r, i: r.id == i and r.stored,
    ),
    # A read by id: its lookup and its read share one snapshot.
    "standing": (lambda m, i: m.standing([i]), lambda r, i: [s.id for s in r] == [i]),
    "declare": (
        lambda m, i: m.declare({"entities": [{"name": "Racer"}]}, anchor_ref=f"mem:{i}"),
        lambda r, _: r.entities == ("Racer",) and r.mentions == 1,
    ),
}


def _left(target: str, seq: int, memory_id: str) -> list[str]:
    """What still names the memory: ``memories`` while it is stored, and each table
    holding a trace of it."""
    union = " UNION ALL ".join(
        [f"SELECT '{table}' FROM {table} WHERE {column} = {int(seq)}"
         for table, column in (("memories", "seq"), *TRACES)]
        + [f"SELECT 'trust_ratifications' FROM trust_ratifications WHERE memory_id = '{memory_id}'"]
    )  # fmt: skip
    return sorted({name for (name,) in raw_query(target, union)})


def _round(writer: Memory, forgetter: Memory, name: str) -> tuple[str, str, int, str]:
    """One race; ``(the write's outcome, the forget's, the memory's seq and id)``."""
    write, committed = WRITES[name]
    memory_id = writer.write("a note racing its forget", concepts=["race", "forget"]).id
    assert memory_id is not None
    (seq,) = writer._store.visible_seqs(writer.scope, [memory_id]).values()
    start = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def run_write() -> None:
        start.wait()
        try:
            result = write(writer, memory_id)
            outcomes["write"] = "done" if committed(result, memory_id) else f"claimed {result!r}"
        except UnknownMemory:
            outcomes["write"] = "gone"
        except Exception as exc:  # what the test counts: anything untyped or unexpected
            outcomes["write"] = f"{type(exc).__name__}: {exc}"

    def run_forget() -> None:
        start.wait()
        try:
            outcomes["forget"] = str(forgetter.forget([memory_id]))
        except Exception as exc:
            outcomes["forget"] = f"{type(exc).__name__}: {exc}"

    threads = [threading.Thread(target=run_write), threading.Thread(target=run_forget)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes["write"], outcomes["forget"], seq, memory_id


@pytest.mark.parametrize("name", list(WRITES))
def test_a_write_by_id_racing_forget_commits_whole_or_finds_it_gone(
    name: str, store_target: Target
) -> None:
    target = store_target()
    # The forgetter reads in the role a moved memory is restricted to, so it can
    # always reach what it forgets.
    with (
        Memory(target, agent_id="ops") as writer,
        Memory(target, agent_id="ops", role="ops") as forgetter,
    ):
        wrong = []
        for _ in range(ROUNDS):
            write, forget, seq, memory_id = _round(writer, forgetter, name)
            left = _left(target, seq, memory_id)
            if write not in ("done", "gone") or forget != "1" or left:
                wrong.append((write, forget, left))
        assert wrong == [], f"{len(wrong)} of {ROUNDS} rounds went wrong, first: {wrong[:3]}"
