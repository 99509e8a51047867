"""Every public `Memory` method fuzzed with hostile arguments on real stores of both backends.

Invariant checked: whatever a caller passes, a method returns or raises an
`AssocmemError`; any other exception (TypeError, RecursionError, OverflowError,
UnicodeEncodeError, a raw backend error...) fails the test.

``ASSOCMEM_FUZZ_EXAMPLES`` sets the examples per operation and backend, for a
deeper run by hand (e.g. 1000) than the default suite affords.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assocmem import Memory
from assocmem.errors import AssocmemError
from assocmem.surface import operations
from tests.conftest import BACKENDS, fresh_database

# Examples per operation and backend in the default run: the count the suite ran
# before it covered PostgreSQL, kept so both backends together stay quick.
EXAMPLES = int(os.environ.get("ASSOCMEM_FUZZ_EXAMPLES", "60"))


def deep(levels: int, leaf: Any = 1) -> Any:
    value = leaf
    for i in range(levels):
        value = {"k": value} if i % 2 else [value]
    return value


def deep_dict(levels: int) -> dict[str, Any]:
    value: Any = 1
    for _ in range(levels):
        value = {"k": value}
    return {"k": value}


HOSTILE_TEXT = st.sampled_from(
    ["\ud800", "a\udfffb", "nul\x00byte", "", " ", "x" * 70_000, "é" * 40_000, "mem:nope"]
) | st.text(max_size=40)
HOSTILE_NUMBER = (
    st.sampled_from(
        [2**64, -(2**64), 2**63, 10**400, -1, 0, float("nan"), float("inf"), -1e308, True]
    )
    | st.integers()
    | st.floats()
)
SCALAR = st.none() | st.booleans() | HOSTILE_NUMBER | HOSTILE_TEXT
NESTED = st.sampled_from([[], [[]], [[[]]], {}, [{}], deep(40), deep(400), deep_dict(1000)])
HOSTILE = st.recursive(
    SCALAR | NESTED,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            HOSTILE_TEXT | st.sampled_from(["kind", "meta.x", "$gt", "name"]), inner, max_size=3
        )
    ),  # fmt: skip
    max_leaves=6,
)
# Times at and past the ends of what a stored time can hold, and offsets that carry a
# valid local time across them, so a time reaches the store's arithmetic too.
TIME = st.sampled_from(
    ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00", "0999-01-01T00:00:00Z",
     "0099-12-31T23:59:59.5+00:00", "9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59-05:00",
     "2024-02-30T00:00:00Z", "2024-05-01T12:00:00", "2024-05-01T12:00:00+24:00", "+2024-05-01"]
) | st.datetimes(timezones=st.timezones()).map(lambda moment: moment.isoformat())  # fmt: skip
WHERE = st.dictionaries(
    st.sampled_from(["kind", "value", "source", "tags", "typo", "meta.n", "\ud800", "observed_at"]),
    SCALAR
    | TIME
    | st.dictionaries(
        st.sampled_from(["$gt", "$in", "$contains", "$nin", "$bad"]),
        SCALAR | st.lists(SCALAR, max_size=2),
        max_size=2,
    ),  # fmt: skip
    max_size=3,
)

# Plausible values too, so a call gets past its first check to the deeper ones.
PLAUSIBLE: dict[str, Any] = {
    "text": st.just("the deploy failed on tuesday"),
    "query": st.just("deploy failed"),
    "ids": st.just(["KNOWN"]),
    "concepts": st.just(["deploy"]),
    "where": WHERE,
    "prefer": WHERE,
    "meta": st.dictionaries(HOSTILE_TEXT, HOSTILE, max_size=3) | NESTED,
    "key": st.lists(HOSTILE_TEXT, min_size=2, max_size=2),
    "items": st.lists(
        st.dictionaries(st.sampled_from(["text", "meta", "kind", "tags"]), HOSTILE, max_size=3),
        max_size=3,
    ),  # fmt: skip
    "associations": st.fixed_dictionaries(
        {"entities": st.lists(st.fixed_dictionaries({"name": HOSTILE_TEXT}), max_size=2)}
    ),
    "entity": HOSTILE_TEXT,
    "observed_at": TIME,
    "verified_at": TIME,
    "recheck_by": TIME,
    "as_of": TIME,
    "lines": st.lists(
        st.fixed_dictionaries(
            {"text": st.just("the deploy failed on tuesday")},
            optional={
                "observed_at": TIME,
                "created_at": TIME,
                "accessed_at": TIME,
                "verified_at": TIME,
                "recheck_by": TIME,
            },
        )
        | st.fixed_dictionaries(
            {
                "line": st.just("link"),
                "a": st.just("deploy"),
                "b": st.just("tuesday"),
                "weight": st.just(1.0),
                "count": st.just(1),
                "updated_at": TIME,
            }
        )
        | st.fixed_dictionaries(
            {
                "line": st.just("feedback"),
                "id": st.integers(1, 9),
                "outcome": st.just(1.0),
                "created_at": TIME,
            }
        ),
        max_size=3,
    ),
    # trust: attribution
    "by_key": st.just("a-peer"),
    "amount": st.just(1.0),
    "budget": st.just(5.0),
    # inspection: values that pass, so the fuzz reaches the store queries too
    "offset": st.integers(min_value=-1, max_value=3),
    "status": st.sampled_from(["active", "superseded", "archived", "gone"]),
    "tag": st.sampled_from(["ops", "%", "_"]),
}


def arguments(op_name: str) -> st.SearchStrategy[dict[str, Any]]:
    op = operations()[op_name]
    fields = {}
    for parameter in op.parameters:
        draw = HOSTILE
        if parameter.name in PLAUSIBLE:
            draw = PLAUSIBLE[parameter.name] | HOSTILE
        # A ``*args`` parameter travels as a list on every surface.
        fields[parameter.name] = st.lists(draw, max_size=3) if parameter.variadic else draw
    required = {p.name for p in op.parameters if p.required}
    return st.fixed_dictionaries(
        {n: s for n, s in fields.items() if n in required},
        optional={n: s for n, s in fields.items() if n not in required},
    )


@pytest.fixture(scope="module", params=BACKENDS)
def memory(request: pytest.FixtureRequest) -> Iterator[tuple[Memory, dict[str, int]]]:
    with tempfile.TemporaryDirectory() as tmp:
        # -- the vault (vault/ room): a fuzzed path may name "/" or ".", so the memory
        # may index only a small vault of its own, and apply_links writes only there.
        vault = Path(tmp) / "vault"
        (vault / "a").mkdir(parents=True)
        (vault / "a" / "One.md").write_text("# One\n\nThe deploy failed. See [[Two]].\n")
        (vault / "Two.md").write_text("# Two\n\nA second note.\n")
        PLAUSIBLE["path"] = st.just(str(vault))
        PLAUSIBLE["note"] = st.sampled_from(["One", "Two", "a/One.md"])
        if request.param == "postgres":
            target = fresh_database(request.getfixturevalue("postgres_server"))
        else:
            target = str(Path(tmp) / "fuzz.db")
        mem = Memory(target, agent_id="fuzzer", vault_roots=[str(vault)])
        mem.vault_index(str(vault))
        known = mem.write("the deploy failed on tuesday", meta={"n": 3}).id
        assert known is not None
        PLAUSIBLE["ids"] = st.just([known])
        PLAUSIBLE["id"] = st.just(known)  # trust: attribution
        yield mem, {"calls": 0, "failures": 0}
        mem.close()


@pytest.mark.parametrize("op_name", list(operations()))
def test_a_hostile_call_raises_only_assocmem_errors(
    op_name: str, memory: tuple[Memory, dict[str, int]]
) -> None:
    mem, counts = memory
    op = operations()[op_name]

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(arguments(op_name))
    def run(args: dict[str, Any]) -> None:
        counts["calls"] += 1
        try:
            op.call(mem, args)
        except AssocmemError:
            pass
        except Exception as exc:
            counts["failures"] += 1
            raise AssertionError(f"{op_name}({args!r:.300}) raised {type(exc).__name__}") from exc

    run()
