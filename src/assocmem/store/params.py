"""Bound-parameter helpers shared by every SQL module of the store.

Statements are written with ``?`` placeholders (the PostgreSQL connection rewrites
them); these build the placeholder lists, keep ``IN`` lists to a bounded size, and
turn values into what both drivers bind the same way.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

# Parameters per IN (...) list; SQLite allows 32766, smaller chunks keep plans simple.
CHUNK = 500

# Opens a read statement whose rows are found by unique keys (sequence numbers, ids,
# names, a store_info key): its best plan cannot depend on the values bound, so
# PostgreSQL may keep one plan for it across calls. A read's other statements walk
# postings and search text whose sizes are Zipf-skewed, and are planned for their own
# values each time (store/postgres.py). A comment, so it changes nothing else.
KEYED = "/* keyed */ "


def chunked(values: Sequence[Any], size: int = CHUNK) -> Iterator[Sequence[Any]]:
    """``values`` in consecutive slices of at most ``size``."""
    for start in range(0, len(values), size):
        yield values[start : start + size]


def qmarks(count: int) -> str:
    """``count`` comma-separated placeholders."""
    return ",".join("?" * count)


def in_list(column: str, values: Sequence[Any]) -> str:
    """``column IN (?,…)`` with one placeholder per value."""
    return f"{column} IN ({qmarks(len(values))})"


def bindable(value: Any) -> Any:
    """A filter value as both drivers bind it: booleans as 0/1, tuples element-wise."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, tuple):
        return tuple(bindable(v) for v in value)
    return value


def translated(method: Callable[P, R]) -> Callable[P, R]:
    """Backend exceptions leave a store method as the matching `AssocmemError`
    (the store, the method's first argument, names its driver's errors)."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except Exception as exc:
            store: Any = args[0]
            if isinstance(exc, getattr(store, "driver_errors", ())):
                raise store.translate(exc) from exc
            raise

    return wrapper


def id_array(ids: Sequence[int]) -> str:
    """An array of `padded` ids, one placeholder each, for a walk to unnest.

    A kept plan prices a bound array as 10 rows, so PostgreSQL found a walk of two
    concepts cheaper planned anew each time and never kept it. The length of an
    array constructor is known to it; padding it to a power of two keeps the
    statements few (one per power) and the price within 2x.
    """
    return "ARRAY[" + ", ".join(["?::bigint"] * _padded_length(len(ids))) + "]"


def padded(ids: Sequence[int]) -> list[int | None]:
    """``ids`` and NULLs up to the length `id_array` gives: a NULL id matches no row."""
    return [*ids, *[None] * (_padded_length(len(ids)) - len(ids))]


def _padded_length(count: int) -> int:
    return 1 << max(0, count - 1).bit_length()
