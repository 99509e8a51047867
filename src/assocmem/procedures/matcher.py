"""The deterministic matcher: which cases a procedure's preconditions cover, and how
it responds to a case. Pure functions over plain data; no model is consulted.

Invariants: a condition is data (field → value, a list of values, or a dict of
``$ne $in $nin $exists``), checked before it is used; a case is a flat mapping of
facts; the same procedure and case always give the same response.

A procedure's response to a case: the ``do`` of the first guard step (a step
``{"when": condition, "do": action}``) whose condition holds; else ``"apply"``
(its plain steps run) when its preconditions cover the case; else ``"decline"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assocmem.errors import InvalidInput

APPLY = "apply"
DECLINE = "decline"
OPERATORS = ("$ne", "$in", "$nin", "$exists")
MAX_STEPS = 100
MAX_CHECKS = 100


def check_condition(condition: Any, field: str) -> dict[str, Any]:
    """A condition as a plain dict, or `InvalidInput` naming ``field``."""
    if condition is None:
        return {}
    if not isinstance(condition, Mapping):
        raise InvalidInput("a condition is a dict of field -> value", field=field)
    for name, wanted in condition.items():
        if not isinstance(name, str) or not name:
            raise InvalidInput("a condition's fields are non-empty strings", field=field)
        if isinstance(wanted, Mapping):
            if not wanted or set(wanted) - set(OPERATORS):
                raise InvalidInput(
                    f"a condition's operators are {', '.join(OPERATORS)}", field=field
                )
            for op in ("$in", "$nin"):
                if op in wanted and (isinstance(wanted[op], str | Mapping)
                                     or not isinstance(wanted[op], Sequence)):  # fmt: skip
                    raise InvalidInput(f"{op} takes a list", field=field)
            if "$exists" in wanted and not isinstance(wanted["$exists"], bool):
                raise InvalidInput("$exists takes true or false", field=field)
    return dict(condition)


def check_steps(steps: Any) -> list[Any]:
    """Steps: a non-empty list of action strings and ``{"when", "do"}`` guards."""
    if isinstance(steps, str | Mapping) or not isinstance(steps, Sequence) or not steps:
        raise InvalidInput("steps is a non-empty list of actions", field="steps")
    if len(steps) > MAX_STEPS:
        raise InvalidInput(f"a procedure has at most {MAX_STEPS} steps", field="steps")
    checked: list[Any] = []
    for step in steps:
        if isinstance(step, str) and step.strip():
            checked.append(step)
        elif (
            isinstance(step, Mapping)
            and set(step) == {"when", "do"}
            and isinstance(step["do"], str)
            and step["do"].strip()
        ):
            checked.append({"when": check_condition(step["when"], "steps"), "do": step["do"]})
        else:
            raise InvalidInput(
                'each step is an action string or {"when": condition, "do": action}',
                field="steps",
            )
    if not any(isinstance(s, str) for s in checked):
        raise InvalidInput("steps needs at least one action to apply", field="steps")
    return checked


def check_checks(checks: Any) -> list[dict[str, Any]]:
    """Check cases: a list of ``{"case": facts, "expect": response}``."""
    if checks is None:
        return []
    if isinstance(checks, str | Mapping) or not isinstance(checks, Sequence):
        raise InvalidInput('checks is a list of {"case": {...}, "expect": "..."}', field="checks")
    if len(checks) > MAX_CHECKS:
        raise InvalidInput(f"a procedure has at most {MAX_CHECKS} checks", field="checks")
    checked = []
    for check in checks:
        if (
            not isinstance(check, Mapping)
            or set(check) != {"case", "expect"}
            or not isinstance(check["case"], Mapping)
            or not isinstance(check["expect"], str)
        ):
            raise InvalidInput(
                'each check is {"case": {facts}, "expect": "apply", "decline" or an action}',
                field="checks",
            )
        checked.append({"case": dict(check["case"]), "expect": check["expect"]})
    return checked


def holds(condition: Mapping[str, Any], case: Mapping[str, Any]) -> bool:
    """Whether every clause of ``condition`` holds for ``case`` (an empty one always does)."""
    return all(_clause(wanted, name in case, case.get(name)) for name, wanted in condition.items())


def _clause(wanted: Any, present: bool, value: Any) -> bool:
    if isinstance(wanted, Mapping):
        return all(_operator(op, arg, present, value) for op, arg in wanted.items())
    if isinstance(wanted, list | tuple):
        return present and value in wanted
    return present and value == wanted


def _operator(op: str, arg: Any, present: bool, value: Any) -> bool:
    if op == "$exists":
        return present is arg
    if op == "$ne":
        return not present or value != arg
    if op == "$in":
        return present and value in arg
    return not present or value not in arg  # $nin


def respond(steps: Sequence[Any], preconditions: Mapping[str, Any], case: Mapping[str, Any]) -> str:
    """The procedure's response to ``case`` (see the module docstring)."""
    for step in steps:
        if isinstance(step, Mapping) and holds(step["when"], case):
            return str(step["do"])
    return APPLY if holds(preconditions, case) else DECLINE


def render(steps: Sequence[Any], preconditions: Mapping[str, Any]) -> str:
    """The procedure as one line of text: when it applies, then its steps."""
    scope = " and ".join(f"{k} {_said(v)}" for k, v in preconditions.items()) or "always"
    said = [s if isinstance(s, str) else f"if {_when(s['when'])}: {s['do']}" for s in steps]
    return f"When {scope}: " + "; ".join(said)


def _when(condition: Mapping[str, Any]) -> str:
    return " and ".join(f"{k} {_said(v)}" for k, v in condition.items())


def _said(wanted: Any) -> str:
    if isinstance(wanted, Mapping):
        words = {"$ne": "is not", "$in": "is one of", "$nin": "is none of"}
        return " and ".join(
            ("is given" if a else "is absent") if op == "$exists" else f"{words[op]} {a}"
            for op, a in wanted.items()
        )
    return f"is one of {list(wanted)}" if isinstance(wanted, list | tuple) else f"is {wanted}"
