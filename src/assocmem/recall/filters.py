"""Hard filters (`where`) and soft cues (`prefer`): parsed and validated, backend-free.

A filter maps a field to a value, a list of values, or operators
(``$eq $ne $gt $gte $lt $lte $in $nin $contains``); all fields are AND-ed. A
field names a column when it is one of `COLUMNS`, otherwise a key of ``meta``.
The store compiles the parsed `Condition`s to SQL with every value bound as a
parameter; field names reach SQL only through the allow-list or as bound JSON
paths, never spliced.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from assocmem.errors import InvalidInput
from assocmem.schema import COLUMNS, Condition, Cue, Scalar

OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$contains"})
MAX_CONDITIONS = 32
MAX_LIST = 1000

# A cue's trust when the caller gives none: a matching memory's score rises by half.
DEFAULT_PREFER_TRUST = 0.5
# The product of all cue boosts is capped here unless the caller says otherwise, so
# soft preferences reorder close candidates but never bury a clearly better match.
DEFAULT_PREFER_MAX_BOOST = 2.0


def parse_where(where: Mapping[str, Any] | None, *, field: str = "where") -> tuple[Condition, ...]:
    """Validate a filter dict into conditions (empty for None)."""
    if where is None:
        return ()
    if not isinstance(where, Mapping) or not where:
        raise InvalidInput(f"{field} must be a non-empty dict of field conditions", field=field)
    conditions: list[Condition] = []
    for name, spec in where.items():
        conditions += _conditions(_check_field(name, field), spec, field)
    if len(conditions) > MAX_CONDITIONS:
        raise InvalidInput(f"{field} has more than {MAX_CONDITIONS} conditions", field=field)
    return tuple(conditions)


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


def _check_field(name: Any, where: str) -> str:
    if not isinstance(name, str) or not name or len(name) > 128:
        raise InvalidInput(f"{where} field names must be non-empty strings", field=where)
    if any(ch in name for ch in '"\\') or any(ord(ch) < 32 for ch in name):
        raise InvalidInput(f"{where} field {name!r} contains a quote or control character",
                           field=where)  # fmt: skip
    return name


def _conditions(name: str, spec: Any, where: str) -> list[Condition]:
    meta = name not in COLUMNS
    if isinstance(spec, Mapping):
        if not spec or not all(op in OPERATORS for op in spec):
            bad = [op for op in spec if op not in OPERATORS] or ["(none)"]
            raise InvalidInput(f"{where}: unknown operator {bad[0]!r} on {name!r}", field=where)
        return [
            Condition(name, op, _check_value(op, v, name, where), meta) for op, v in spec.items()
        ]
    if isinstance(spec, list | tuple):
        return [Condition(name, "$in", _check_value("$in", spec, name, where), meta)]
    return [Condition(name, "$eq", _check_value("$eq", spec, name, where), meta)]


def _check_value(op: str, value: Any, name: str, where: str) -> Any:
    if op in ("$in", "$nin"):
        if not isinstance(value, list | tuple) or len(value) > MAX_LIST:
            raise InvalidInput(f"{where}: {op} on {name!r} needs a list (≤ {MAX_LIST})",
                               field=where)  # fmt: skip
        return tuple(_check_scalar(v, name, where) for v in value)
    if op in ("$gt", "$gte", "$lt", "$lte") and value is None:
        raise InvalidInput(f"{where}: {op} on {name!r} needs a value", field=where)
    return _check_scalar(value, name, where)


def _check_scalar(value: Any, name: str, where: str) -> Scalar:
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise InvalidInput(f"{where}: {name!r} must compare with strings, numbers or booleans",
                       field=where)  # fmt: skip
