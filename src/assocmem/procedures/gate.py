"""Procedures: a candidate proposed from episodes, the promotion gate, revision and
retirement.

Invariants: a candidate is never readable as a procedure; only the gate writes the
``procedural`` record, and only when ≥ 2 successful episodes its preconditions cover
support it, no failed episode they cover contradicts it, and every check case gets
the expected response (`matcher`). Nothing a writer sets on the procedure (a kind,
a confidence) counts. A revision is a new version that supersedes the old one only
by passing the gate itself; retiring archives the record, reversibly.

An episode is an ``episodic`` memory; its facts are its ``meta``. It succeeded when
``meta.outcome`` says so (`SUCCESS`) or its feedback sums above zero, and failed
when ``meta.outcome`` says so (`FAILURE`) or its feedback sums below zero.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from assocmem.errors import InvalidInput, UnknownMemory
from assocmem.procedures import matcher
from assocmem.procedures.store import ProcedureRow
from assocmem.procedures.types import Procedure
from assocmem.schema import NewMemory
from assocmem.store import Store, View
from assocmem.text import times
from assocmem.types import Record, Scope, WriteResult
from assocmem.write import validate

SUCCESS = ("success", "succeeded", "ok", "fixed")
FAILURE = ("failure", "failed", "error", "blocked")
MIN_SUPPORT = 2
# Episodes the gate reads at most when it looks for counterexamples.
MAX_SCAN = 100_000

Write = Callable[[NewMemory], WriteResult]


class Ratings(Protocol):
    """What an episode's rated outcome reads: the feedback outcomes of each memory."""

    def outcomes_of(self, seqs: Sequence[int]) -> dict[int, list[float]]: ...


class ProcedureStore(Ratings, Store, Protocol):
    """What the gate reads and writes: the procedures part, the lifecycle part's
    selection and status, memory rows and rated outcomes."""

    def select(self, view: View, limit: int) -> list[int]: ...

    def set_lifecycle(
        self,
        seqs: Sequence[int],
        *,
        status: str | None = None,
        protected: bool | None = None,
        recheck_by: str | None = None,
    ) -> None: ...

    def add_procedure(self, scope: Scope, fields: dict[str, Any], when: str) -> str: ...

    def procedures(self, scope: Scope, ids: Sequence[str]) -> dict[str, ProcedureRow]: ...

    def procedures_named(self, scope: Scope, name: str) -> list[ProcedureRow]: ...

    def set_procedure(
        self,
        seq: int,
        *,
        status: str,
        gate: dict[str, Any] | None = None,
        reason: str | None = None,
        memory_seq: int | None = None,
    ) -> None: ...


def propose(
    store: ProcedureStore,
    view: View,
    episodes: Sequence[str],
    steps: Any,
    preconditions: Any = None,
    checks: Any = None,
    name: str | None = None,
    supersedes: ProcedureRow | None = None,
) -> Procedure:
    """Store a candidate procedure; it is checked, never promoted, here."""
    fields = {
        "name": _check_name(name),
        "version": supersedes.version + 1 if supersedes else 1,
        "status": "candidate",
        "steps": matcher.check_steps(steps),
        "preconditions": matcher.check_condition(preconditions, "preconditions"),
        "checks": matcher.check_checks(checks),
        "episodes": _episode_ids(store, view, episodes),
        "supersedes": supersedes.id if supersedes else None,
    }
    public_id = store.add_procedure(view.scope, fields, times.now())
    return to_procedure(row(store, view, public_id), store)


def workflow_candidate(
    store: ProcedureStore,
    view: View,
    name: str,
    episodes: Sequence[str],
    steps: Any,
    preconditions: Any,
    checks: Any,
) -> Procedure:
    """The candidate of workflow ``name`` on ``episodes``: a version not superseded
    that already rests on them, else a new candidate (so a retention rule proposes
    once per workflow and set of episodes)."""
    for known in reversed(store.procedures_named(view.scope, name)):
        if known.status != "superseded" and set(episodes) <= set(known.episodes):
            return to_procedure(known, store)
    return propose(store, view, episodes, steps, preconditions, checks, name=name)


def promote(store: ProcedureStore, view: View, row_: ProcedureRow, write: Write) -> Procedure:
    """Run the gate on a candidate (or a rejected one since given new evidence)."""
    if row_.status not in ("candidate", "rejected"):
        raise InvalidInput(f"procedure {row_.id} is {row_.status}, not a candidate", field="id")
    gate = evaluate(store, view, row_)
    if gate["reason"] is not None:
        store.set_procedure(row_.seq, status="rejected", gate=gate, reason=gate["reason"])
        return to_procedure(row(store, view, row_.id), store)
    with store.transaction():
        result = write(_record(row_))
        seqs = store.visible_seqs(view.scope, [result.id] if result.id else [])
        store.set_procedure(
            row_.seq, status="promoted", gate=gate, memory_seq=seqs.get(result.id or "")
        )
        if row_.supersedes:
            _supersede(store, view, row_.supersedes)
    return to_procedure(row(store, view, row_.id), store)


def retire(store: ProcedureStore, view: View, row_: ProcedureRow, retired: bool) -> Procedure:
    """Retire a promoted procedure (its record archived) or bring a retired one back."""
    wanted = ("promoted", "retired") if retired else ("retired", "promoted")
    if row_.status != wanted[0]:
        raise InvalidInput(f"procedure {row_.id} is {row_.status}, not {wanted[0]}", field="id")
    with store.transaction():
        if row_.memory_seq is not None:
            store.set_lifecycle([row_.memory_seq], status="archived" if retired else "active")
        store.set_procedure(row_.seq, status=wanted[1], reason=row_.reason)
    return to_procedure(row(store, view, row_.id), store)


def evaluate(store: ProcedureStore, view: View, row_: ProcedureRow) -> dict[str, Any]:
    """The gate's findings: supporting episodes, counterexamples, check results, and
    the first reason it refuses (None: it passes)."""
    given = _episodes(store, view, row_.episodes)
    every = {**_episodes_in_view(store, view), **given}
    outcomes = _outcomes(store, every)
    applies = {
        seq: matcher.respond(row_.steps, row_.preconditions, record.meta) == matcher.APPLY
        for seq, record in every.items()
    }
    supporting = [r.id for s, r in given.items() if applies[s] and outcomes[s] == "success"]
    counter = sorted(s for s in every if applies[s] and outcomes[s] == "failure")
    results = [
        {**c, "got": matcher.respond(row_.steps, row_.preconditions, c["case"])}
        for c in row_.checks
    ]
    for result in results:
        result["passed"] = result["got"] == result["expect"]
    return {
        "supporting": supporting,
        "counterexamples": [every[s].id for s in counter],
        "checks": results,
        "reason": _reason(
            supporting, [every[s] for s in counter], results, [r.meta for r in given.values()]
        ),
    }


def exclusion(counter: Record, supporting: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The preconditions that would leave ``counter`` out: each of its facts no
    supporting episode shares, as ``{field: {"$ne": value}}``."""
    return {
        k: {"$ne": v}
        for k, v in counter.meta.items()
        if k != "outcome" and isinstance(v, str | int | float | bool)
        and all(s.get(k) != v for s in supporting)
    }  # fmt: skip


def _reason(
    supporting: Sequence[str],
    counter: Sequence[Record],
    results: Sequence[Mapping[str, Any]],
    given: Sequence[Mapping[str, Any]],
) -> str | None:
    if counter:
        first = counter[0]
        scope = exclusion(first, given)
        hint = f"; scope it with preconditions {scope}" if scope else ""
        return (
            f"counterexample episode {first.id}: its preconditions cover it "
            f"({_facts(first.meta)}) but its outcome failed{hint}"
        )
    if len(supporting) < MIN_SUPPORT:
        return (
            f"needs {MIN_SUPPORT} supporting successful episodes its preconditions cover; "
            f"has {len(supporting)}"
        )
    if not results:
        return "needs at least one check case"
    failed = next((r for r in results if not r["passed"]), None)
    if failed is not None:
        return (
            f"check case {_facts(failed['case'])}: expected {failed['expect']!r}, "
            f"got {failed['got']!r}"
        )
    return None


def _facts(facts: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in facts.items() if k != "outcome")


def _outcomes(store: Ratings, records: Mapping[int, Record]) -> dict[int, str | None]:
    sums = feedback_sums(store, list(records))
    result: dict[int, str | None] = {}
    for seq, record in records.items():
        said = record.meta.get("outcome")
        said = said.strip().lower() if isinstance(said, str) else None
        rated = sums.get(seq, 0.0)
        if said in SUCCESS or (said is None and rated > 0):
            result[seq] = "success"
        elif said in FAILURE or (said is None and rated < 0):
            result[seq] = "failure"
        else:
            result[seq] = None
    return result


def feedback_sums(store: Ratings, seqs: Sequence[int]) -> dict[int, float]:
    """The summed feedback outcome of each rated memory among ``seqs``."""
    return {seq: sum(rated) for seq, rated in store.outcomes_of(seqs).items()}


def _episodes(store: ProcedureStore, view: View, ids: Sequence[str]) -> dict[int, Record]:
    seqs = store.visible_seqs(view.scope, list(ids), statuses=("active",))
    found = store.records_by_seq([seqs[i] for i in ids if i in seqs])
    return {s: r for s, r in found.items() if r.kind == "episodic"}


def _episodes_in_view(store: ProcedureStore, view: View) -> dict[int, Record]:
    episodic = replace(view, kinds=("episodic",), statuses=("active",))
    return store.records_by_seq(store.select(episodic, MAX_SCAN))


def _episode_ids(store: ProcedureStore, view: View, episodes: Any) -> list[str]:
    if (
        isinstance(episodes, str)
        or not isinstance(episodes, Sequence)
        or not episodes
        or not all(isinstance(e, str) for e in episodes)
    ):
        raise InvalidInput("episodes is a non-empty list of memory ids", field="episodes")
    wanted = list(dict.fromkeys(episodes))
    seqs = store.visible_seqs(view.scope, wanted, statuses=("active",))
    missing = [e for e in wanted if e not in seqs]
    if missing:
        raise UnknownMemory(f"no memory {missing[0]!r} is readable here", record_id=missing[0])
    kinds = store.records_by_seq([seqs[e] for e in wanted])
    odd = [r.id for r in kinds.values() if r.kind != "episodic"]
    if odd:
        raise InvalidInput(f"memory {odd[0]} is not an episode", field="episodes")
    return wanted


def _check_name(name: Any) -> str | None:
    if name is not None and (not isinstance(name, str) or not name.strip() or len(name) > 256):
        raise InvalidInput("name is a non-empty string of at most 256 chars", field="name")
    return name


def _record(row_: ProcedureRow) -> NewMemory:
    meta = {
        "procedure": row_.id,
        "version": row_.version,
        "episodes": row_.episodes,
        "preconditions": row_.preconditions,
        "steps": row_.steps,
        "checks": row_.checks,
    }
    if row_.name:
        meta["name"] = row_.name
    return validate.new_memory(
        {
            "text": matcher.render(row_.steps, row_.preconditions),
            "kind": "procedural",
            "meta": meta,
            "derived_from": row_.episodes,
            "tags": ["procedure"],
        }
    )


def _supersede(store: ProcedureStore, view: View, old_id: str) -> None:
    old = store.procedures(view.scope, [old_id]).get(old_id)
    if old is None or old.status not in ("promoted", "retired"):
        return
    if old.memory_seq is not None:
        store.set_lifecycle([old.memory_seq], status="superseded")
    store.set_procedure(old.seq, status="superseded", reason=old.reason)


def row(store: ProcedureStore, view: View, public_id: Any) -> ProcedureRow:
    """The procedure version ``public_id`` names, or `UnknownMemory`."""
    if not isinstance(public_id, str):
        raise InvalidInput("id is a procedure id", field="id")
    found = store.procedures(view.scope, [public_id]).get(public_id)
    if found is None:
        raise UnknownMemory(f"no procedure {public_id!r} is readable here", record_id=public_id)
    return found


def to_procedure(row_: ProcedureRow, store: ProcedureStore) -> Procedure:
    """The public shape of a stored version."""
    record = store.records_by_seq([row_.memory_seq]) if row_.memory_seq is not None else {}
    return Procedure(
        id=row_.id,
        name=row_.name,
        version=row_.version,
        status=row_.status,
        steps=tuple(row_.steps),
        preconditions=row_.preconditions,
        checks=tuple(row_.checks),
        episodes=tuple(row_.episodes),
        supporting=tuple(row_.gate.get("supporting", ())),
        counterexamples=tuple(row_.gate.get("counterexamples", ())),
        check_results=tuple(row_.gate.get("checks", ())),
        reason=row_.reason,
        record_id=next((r.id for r in record.values()), None),
        supersedes=row_.supersedes,
    )
