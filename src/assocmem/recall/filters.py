"""Hard filters (`where`) and soft cues (`prefer`): parsed and validated.

A filter maps a field to a value, a list of values, or operators
(``$eq $ne $gt $gte $lt $lte $in $nin $contains``); all fields are AND-ed, and a
top-level operator (``$or``, ``$and``) is refused as such. A field names a column
when it is one of `COLUMNS`; ``meta.<key>`` names a key of ``meta`` explicitly, any
key, carried yet or not. A bare other name is read as a meta key too, but only one
some memory the reader can read carries (`check_fields` asks the store when the
filter is used): a name that is neither is refused, naming the columns it is
closest to and the valid fields, since it could only match nothing (or, negated,
everything). A bare name very close to a column is refused as its typo, and a
filter that selects what a destructive call removes must spell meta keys
``meta.<key>``, since a misspelt column there would silently match, and delete,
everything lacking it. A comparison a column's type can never satisfy (a number
against a text column, a string against a numeric one) is refused rather than
matching nothing. The store compiles the parsed `Condition`s to SQL with every
value bound as a parameter; field names reach SQL only through the allow-list or
as bound JSON paths, never spliced.
"""

from __future__ import annotations

import difflib
import math
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from assocmem.errors import InvalidInput
from assocmem.schema import COLUMNS, LIST_COLUMNS, Condition, Cue, Scalar
from assocmem.store import View
from assocmem.text import times
from assocmem.types import STATUSES

# In the order the documentation lists them, which is the order a refusal names them.
OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$contains")
MAX_CONDITIONS = 32
MAX_LIST = 1000
META_PREFIX = "meta."
NUMERIC_COLUMNS = frozenset({"confidence", "value", "valence"})
BOOLEAN_COLUMNS = frozenset({"protected"})
RANGE_OPERATORS = frozenset({"$gt", "$gte", "$lt", "$lte"})
# Columns holding stored times (`assocmem.text.times`): compared as text, which is
# time order only in the stored form.
TIME_COLUMNS = frozenset({"observed_at", "verified_at", "recheck_by", "created_at"})
# A bare name at least this close to a column (difflib's ratio) is refused as its
# typo even where a meta key has that name: one letter dropped or added in a name of
# four or more letters ("knd", "tag"), not a transposition ("knid", 0.75), which the
# store check catches unless a memory really carries that key.
TYPO_CUTOFF = 0.8
# How close a column must be to be suggested for an unknown name: difflib's own
# default, which reaches a transposition ("knid" → "kind").
SUGGEST_CUTOFF = 0.6

# A cue's trust when the caller gives none: a matching memory's score rises by half.
DEFAULT_PREFER_TRUST = 0.5
# The product of all cue boosts is capped here unless the caller says otherwise, so
# soft preferences reorder close candidates but never bury a clearly better match.
DEFAULT_PREFER_MAX_BOOST = 2.0


def parse_where(
    where: Mapping[str, Any] | None, *, field: str = "where", destructive: bool = False
) -> tuple[Condition, ...]:
    """Validate a filter dict into conditions (empty for None). ``destructive`` (the
    filter picks what `forget` or `archive` removes) requires meta keys spelled
    ``meta.<key>``."""
    if where is None:
        return ()
    if not isinstance(where, Mapping) or not where:
        raise InvalidInput(f"{field} must be a non-empty dict of field conditions", field=field)
    conditions: list[Condition] = []
    for name, spec in where.items():
        column, meta = _check_field(name, field, destructive)
        conditions += _conditions(column, meta, spec, field, bare=meta and column == name)
    if len(conditions) > MAX_CONDITIONS:
        raise InvalidInput(f"{field} has more than {MAX_CONDITIONS} conditions", field=field)
    return tuple(conditions)


@dataclass(frozen=True)
class BareKey(Condition):
    """A condition on a bare name read as a meta key: a field only where some memory
    the reader can read carries that key (`check_fields`). ``where`` names the
    argument it came from."""

    where: str = "where"


# Bare keys found carried, per store and reader: finding one may scan every memory
# the reader can read when few carry it, so a read filtering on it pays that once.
# A key stays known after its last carrier is forgotten: a filter on it then matches
# nothing, as on any key some memory carries with other values.
class FieldProbe(Protocol):
    """What a field check reads: whether any memory a view sees exists (the lifecycle
    part of the store selects; named here so recall need not import that room)."""

    def select(self, view: View, limit: int) -> list[int]: ...


_KNOWN_KEYS: weakref.WeakKeyDictionary[FieldProbe, set[tuple[Any, str | None, str]]] = (
    weakref.WeakKeyDictionary()
)
# Past this many known keys a store's set starts again, so hostile names cannot grow it.
MAX_KNOWN_KEYS = 4096


def check_fields(store: FieldProbe, view: View, cues: Sequence[Cue] = ()) -> None:
    """Refuse a bare name of ``view``'s conditions or of ``cues`` that no memory the
    view's reader can read (any status or kind; working memory of its task only)
    carries as a meta key: it names nothing."""
    named = [*view.conditions, *(c for cue in cues for c in cue.conditions)]
    bare = dict.fromkeys((c.field, c.where) for c in named if isinstance(c, BareKey))
    if not bare:
        return
    known = _KNOWN_KEYS.setdefault(store, set())
    for key, where in bare:
        if (view.scope, view.task, key) in known:
            continue
        carried = Condition(key, "$has", None, True)
        # Any status and kind, not only what this call asks for: the key is known.
        probe = View(view.scope, statuses=STATUSES, conditions=(carried,), task=view.task)
        if store.select(probe, 1):
            if len(known) >= MAX_KNOWN_KEYS:
                known.clear()
            known.add((view.scope, view.task, key))
        else:
            raise InvalidInput(
                f"{where} field {key!r} is not a column, and no memory readable here has a"
                f" meta key of that name.{_suggestion(key)} {_valid_fields()}",
                field=where,
            )


def _suggestion(name: str) -> str:
    close = difflib.get_close_matches(name, sorted(COLUMNS), n=3, cutoff=SUGGEST_CUTOFF)
    return f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def _valid_fields() -> str:
    return (
        f"Valid fields: {', '.join(sorted(COLUMNS))}; or {META_PREFIX}<key> for any meta key,"
        " carried yet or not."
    )


def parse_prefer(
    prefer: Mapping[str, Any] | Sequence[Any] | None, trust: float | None
) -> tuple[Cue, ...]:
    """Validate ``prefer``: one filter dict (with ``trust``) or a list of (dict, trust)."""
    if prefer is None:
        return ()
    if isinstance(prefer, Mapping):
        return (Cue(parse_where(prefer, field="prefer"), _check_trust(trust)),)
    if isinstance(prefer, str) or not isinstance(prefer, Sequence) or not prefer:
        raise InvalidInput("prefer must be a dict or a list of (dict, trust) pairs", field="prefer")
    if trust is not None:
        raise InvalidInput("give trust inside each (cond, trust) pair, not as prefer_trust",
                           field="prefer_trust")  # fmt: skip
    cues = []
    for entry in prefer:
        if not isinstance(entry, Sequence) or isinstance(entry, str) or len(entry) != 2:
            raise InvalidInput("each prefer entry must be a (dict, trust) pair", field="prefer")
        cues.append(Cue(parse_where(entry[0], field="prefer"), _check_trust(entry[1])))
    return tuple(cues)


def check_max_boost(value: float | None) -> float:
    """The cap on the product of cue boosts: a finite number ≥ 1."""
    if value is None:
        return DEFAULT_PREFER_MAX_BOOST
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInput("prefer_max_boost must be a finite number", field="prefer_max_boost")
    if value < 1.0:
        raise InvalidInput("prefer_max_boost must be at least 1", field="prefer_max_boost")
    return float(value)


def boost(matched_trusts: Sequence[float], cap: float) -> float:
    """The score multiplier for a memory meeting cues of these trusts: a capped product."""
    product = 1.0
    for trust in matched_trusts:
        product *= 1.0 + trust
    return min(product, cap)


def _check_trust(trust: Any) -> float:
    if trust is None:
        return DEFAULT_PREFER_TRUST
    if isinstance(trust, bool) or not isinstance(trust, int | float) or not math.isfinite(trust):
        raise InvalidInput("prefer trust must be a finite number", field="prefer_trust")
    if not 0.0 <= trust <= 10.0:
        raise InvalidInput("prefer trust must be between 0 and 10", field="prefer_trust")
    return float(trust)


def _check_field(name: Any, where: str, destructive: bool) -> tuple[str, bool]:
    """The field a filter name targets and whether it is a meta key."""
    if not isinstance(name, str) or not name or len(name) > 128:
        raise InvalidInput(f"{where} field names must be non-empty strings", field=where)
    if any(ch in name for ch in '"\\') or any(ord(ch) < 32 for ch in name):
        raise InvalidInput(f"{where} field {name!r} contains a quote or control character",
                           field=where)  # fmt: skip
    if name.startswith("$"):
        raise InvalidInput(
            f"{where}: {name!r} is not supported: a filter's fields are all AND-ed; give"
            " alternatives of one field as {field: {'$in': [...]}}, or read once per"
            " alternative",
            field=where,
        )
    if name.startswith(META_PREFIX) and len(name) > len(META_PREFIX):
        return name[len(META_PREFIX) :], True
    if name in COLUMNS:
        return name, False
    if destructive:
        raise InvalidInput(
            f"{where} field {name!r} is not a column; a filter that deletes or archives "
            f"names meta keys explicitly, as {META_PREFIX + name!r}",
            field=where,
        )
    close = difflib.get_close_matches(name, COLUMNS, n=1, cutoff=TYPO_CUTOFF)
    if close:
        raise InvalidInput(
            f"{where} field {name!r} is not a column; did you mean {close[0]!r}? "
            f"(a meta key may be spelled {META_PREFIX + name!r}). {_valid_fields()}",
            field=where,
        )
    return name, True


def _conditions(name: str, meta: bool, spec: Any, where: str, *, bare: bool) -> list[Condition]:
    if isinstance(spec, Mapping):
        if not spec or not all(isinstance(op, str) and op in OPERATORS for op in spec):
            bad = [op for op in spec if op not in OPERATORS] or ["(none)"]
            raise InvalidInput(
                f"{where}: unknown operator {bad[0]!r} on {name!r}; the operators are"
                f" {' '.join(OPERATORS)}",
                field=where,
            )
        pairs = list(spec.items())
    elif isinstance(spec, list | tuple):
        pairs = [("$in", spec)]
    else:
        pairs = [("$eq", spec)]
    conditions = []
    for op, value in pairs:
        checked = _check_value(op, value, name, where)
        if not meta:
            _check_column_type(name, op, checked, where)
            if name in TIME_COLUMNS:
                checked = _stored_times(checked)
        conditions.append(BareKey(name, op, checked, meta, where) if bare else
                          Condition(name, op, checked, meta))  # fmt: skip
    return conditions


def _stored_times(value: Any) -> Any:
    """A whole time with a timezone in its stored form (UTC, four-digit year), so it
    compares as a stored time does; a partial one ("2024-05") stays as given, a prefix
    that string order still compares correctly."""
    if isinstance(value, tuple):
        return tuple(_stored_times(v) for v in value)
    if not isinstance(value, str):
        return value
    try:
        return times.parse_time(value, field="where")
    except InvalidInput:
        return value


def _check_value(op: str, value: Any, name: str, where: str) -> Any:
    if op in ("$in", "$nin"):
        if not isinstance(value, list | tuple) or len(value) > MAX_LIST:
            raise InvalidInput(f"{where}: {op} on {name!r} needs a list (≤ {MAX_LIST})",
                               field=where)  # fmt: skip
        return tuple(_check_scalar(v, name, where) for v in value)
    if op in RANGE_OPERATORS and (value is None or isinstance(value, bool)):
        raise InvalidInput(f"{where}: {op} on {name!r} needs a number or a string", field=where)
    return _check_scalar(value, name, where)


def _check_column_type(name: str, op: str, value: Any, where: str) -> None:
    """Refuse a comparison no row of this column can satisfy (it would match nothing)."""
    values = value if isinstance(value, tuple) else (value,)
    if name in LIST_COLUMNS:
        wanted: tuple[type, ...] = (str,) if op == "$contains" else (str, type(None))
    elif name in NUMERIC_COLUMNS:
        wanted = (int, float, type(None))
    elif name in BOOLEAN_COLUMNS:
        wanted = (bool, int, type(None))
    else:
        wanted = (str, type(None))
    numeric = name in NUMERIC_COLUMNS
    for item in values:
        if not isinstance(item, wanted) or (numeric and isinstance(item, bool)):
            kind = "a number" if numeric else "true/false" if name in BOOLEAN_COLUMNS else "text"
            raise InvalidInput(
                f"{where}: {name!r} holds {kind}; {op} with {item!r} can never match",
                field=where,
            )
    if op == "$contains" and name in NUMERIC_COLUMNS | BOOLEAN_COLUMNS:
        raise InvalidInput(f"{where}: $contains needs a text or list column, not {name!r}",
                           field=where)  # fmt: skip


def _check_scalar(value: Any, name: str, where: str) -> Scalar:
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise InvalidInput(f"{where}: {name!r} must compare with strings, numbers or booleans",
                       field=where)  # fmt: skip
