"""PostgreSQL compilation of a read's view (the twin of `sqlite_where`).

Invariant: every value is a bound parameter; a column name reaches SQL only from
`filters.COLUMNS`, a meta key only as a bound JSON key. Meta is stored as JSON
text and read as ``jsonb``, so numbers compare as numbers and strings as strings.
"""

from __future__ import annotations

import json
from typing import Any

from assocmem.schema import COLUMNS, LIST_COLUMNS, Condition
from assocmem.store.params import bindable

_COMPARE = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def condition_sql(condition: Condition, alias: str) -> tuple[str, list[Any]]:
    """One condition as SQL with its parameters."""
    if condition.meta:
        return _meta(condition, alias)
    if condition.field not in COLUMNS:  # unreachable: parse_where routes these to meta
        raise ValueError(f"not a column: {condition.field}")
    expr, op, value = f"{alias}.{condition.field}", condition.op, bindable(condition.value)
    if op == "$contains":
        if condition.field in LIST_COLUMNS:
            return f"({expr})::jsonb @> ?::jsonb", [json.dumps([value])]
        return f"strpos({expr}, ?) > 0", [str(value)]
    return _compare(expr, op, value, cast="")


def _meta(condition: Condition, alias: str) -> tuple[str, list[Any]]:
    expr = f"(({alias}.meta)::jsonb -> ?)"
    key = [condition.field]
    op, value = condition.op, condition.value
    if op == "$has":  # internal: the meta key is present, a JSON null included
        return f"{expr} IS NOT NULL", key
    if op == "$contains":
        return (
            f"(CASE jsonb_typeof({expr}) WHEN 'array' THEN {expr} @> ?::jsonb"
            f" ELSE strpos({expr} #>> '{{}}', ?) > 0 END)",
            [*key, *key, json.dumps([value]), *key, str(value)],
        )
    if op == "$unset_or_gt" or op in _COMPARE or op in ("$eq", "$ne", "$in", "$nin"):
        sql, params = _compare("\x00", op, _json(value), cast="::jsonb")
        return sql.replace("\x00", expr), _expand(sql, params, key)
    raise ValueError(f"unknown operator {op}")


def _expand(sql: str, params: list[Any], key: list[str]) -> list[Any]:
    """Parameters in order, with the meta key bound where each expression stands."""
    out: list[Any] = []
    values = iter(params)
    for piece in sql.split("\x00")[:-1]:
        out += [next(values) for _ in range(piece.count("?"))]
        out += key
    out += list(values)
    return out


def _compare(expr: str, op: str, value: Any, cast: str) -> tuple[str, list[Any]]:
    mark = f"?{cast}"
    if op == "$eq":
        if value is None or value == "null":
            return f"({expr} IS NULL OR {expr} = 'null'{cast or ''})" if cast else (
                f"{expr} IS NULL"), []  # fmt: skip
        return f"{expr} = {mark}", [value]
    if op == "$ne":
        if value is None or (cast and value == "null"):
            return f"{expr} IS NOT NULL", []
        return f"({expr} IS NULL OR {expr} <> {mark})", [value]
    if op in _COMPARE:
        return f"{expr} {_COMPARE[op]} {mark}", [value]
    if op == "$unset_or_gt":
        return f"({expr} IS NULL OR {expr} > {mark})", [value]
    values = list(value) if isinstance(value, tuple | list) else []
    marks = ",".join([mark] * len(values))
    if op == "$in":
        return (f"{expr} IN ({marks})", values) if values else ("FALSE", [])
    if not values:  # $nin of nothing excludes nothing
        return "TRUE", []
    return f"({expr} IS NULL OR {expr} NOT IN ({marks}))", values


def _json(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(json.dumps(v) for v in value)
    return json.dumps(value)
