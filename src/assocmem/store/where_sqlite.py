"""SQLite compilation of a read's view: scope layers, statuses, kinds, `where` conditions.

Invariant: every value is a bound parameter; a column name reaches SQL only
from `filters.COLUMNS`, a meta key only inside a bound JSON path.
"""

from __future__ import annotations

from typing import Any

from assocmem.schema import COLUMNS, LIST_COLUMNS, Condition
from assocmem.store.params import bindable, qmarks

_COMPARE = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def condition_sql(condition: Condition, alias: str) -> tuple[str, list[Any]]:
    """One condition as SQL with its parameters."""
    if condition.op == "$has":  # internal: the meta key is present, whatever its value
        return f"json_type({alias}.meta, ?) IS NOT NULL", [_json_path(condition.field)]
    expr, expr_params = _expression(condition, alias)
    value, op = bindable(condition.value), condition.op
    if op == "$contains":
        return _contains(condition, alias, expr, expr_params, value)
    if op == "$eq":
        if value is None:
            return f"{expr} IS NULL", expr_params
        return f"{expr} = ?", [*expr_params, value]
    if op == "$ne":
        if value is None:
            return f"{expr} IS NOT NULL", expr_params
        return f"({expr} IS NULL OR {expr} <> ?)", [*expr_params, *expr_params, value]
    if op in _COMPARE:
        return f"{expr} {_COMPARE[op]} ?", [*expr_params, value]
    if op == "$unset_or_gt":  # internal (not a `where` operator): a missing bound never passes
        return f"({expr} IS NULL OR {expr} > ?)", [*expr_params, *expr_params, value]
    marks = qmarks(len(value)) if value else ""
    if op == "$in":
        return (f"{expr} IN ({marks})", [*expr_params, *value]) if value else ("0", [])
    if not value:  # $nin of nothing excludes nothing
        return "1", []
    return f"({expr} IS NULL OR {expr} NOT IN ({marks}))", [*expr_params, *expr_params, *value]


def _expression(condition: Condition, alias: str) -> tuple[str, list[Any]]:
    if condition.meta:
        return f"json_extract({alias}.meta, ?)", [_json_path(condition.field)]
    if condition.field not in COLUMNS:  # unreachable: parse_where routes these to meta
        raise ValueError(f"not a column: {condition.field}")
    return f"{alias}.{condition.field}", []


def _contains(
    condition: Condition, alias: str, expr: str, expr_params: list[Any], value: Any
) -> tuple[str, list[Any]]:
    if not condition.meta and condition.field in LIST_COLUMNS:
        sql = f"EXISTS (SELECT 1 FROM json_each({alias}.{condition.field}) j WHERE j.value = ?)"
        return sql, [value]
    if condition.meta:
        path = _json_path(condition.field)
        sql = (
            f"(CASE json_type({alias}.meta, ?) WHEN 'array' THEN"
            f" EXISTS (SELECT 1 FROM json_each({alias}.meta, ?) j WHERE j.value = ?)"
            f" ELSE instr({expr}, ?) > 0 END)"
        )
        return sql, [path, path, value, *expr_params, value]
    return f"instr({expr}, ?) > 0", [value]


def _json_path(key: str) -> str:
    # Keys with quotes or control characters are refused by filters.parse_where.
    return '$."' + key + '"'
