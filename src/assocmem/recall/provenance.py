"""Provenance: canonical sources and the gates evidence mode applies (not to be
confused with the evidence a reconstruction gathers through relations, `graph/reconstruct.py`).

Invariants: variants of one origin (a full URL, its domain, the site's name) get
one canonical form, so counting sources cannot be inflated by spelling; an
evidence gate admits a memory only for what it can check: a semantic record,
from a named source, verified, and not yet due for a recheck at the moment
asked about. Confidence is never evidence on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from assocmem.errors import InvalidInput
from assocmem.schema import Condition
from assocmem.text.sources import canonical_source
from assocmem.write import validate

# How many sources one scope may name as checked.
MAX_CHECKED = 1000

# Evidence mode's gates, in the order they are applied and reported: the one
# statement of each, as the condition a memory must meet at the moment asked
# about. The read filters with these conditions and names the first one a
# dropped memory fails, so the filter and the report cannot disagree.
# A source is checked when it is named; where an operator named the checked sources for
# the reader's scope (`Memory.set_checked_sources`), only one of those is.
_GATES: tuple[tuple[str, Callable[[str, tuple[str, ...]], Condition]], ...] = (
    ("not_semantic", lambda as_of, checked: Condition("kind", "$eq", "semantic", False)),
    ("unchecked_source", lambda as_of, checked: (
        Condition("source_canonical", "$in", checked, False) if checked
        else Condition("source", "$ne", None, False))),
    ("unverified", lambda as_of, checked: Condition("verified_at", "$lte", as_of, False)),
    # a record without a recheck date never expires
    ("expired", lambda as_of, checked: Condition("recheck_by", "$unset_or_gt", as_of, False)),
)  # fmt: skip
GATES: tuple[str, ...] = tuple(name for name, _ in _GATES)


def gate_conditions(as_of: str, checked: Sequence[str] = ()) -> dict[str, Condition]:
    """Each gate's condition at ``as_of``, in gate order: semantic, from a checked
    source (any named one, or one of ``checked`` canonical sources where given),
    verified by ``as_of``, and not past ``recheck_by`` at ``as_of``."""
    named = tuple(checked)
    return {name: condition(as_of, named) for name, condition in _GATES}


def checked_names(sources: Any) -> list[str]:
    """``sources`` as the canonical forms evidence mode compares, each once, sorted; a
    list of non-empty strings (at most `MAX_CHECKED`), or `InvalidInput` naming
    ``sources``."""
    if isinstance(sources, str) or not isinstance(sources, list | tuple):
        raise InvalidInput("sources must be a list of source names", field="sources")
    if len(sources) > MAX_CHECKED:
        raise InvalidInput(f"at most {MAX_CHECKED} checked sources", field="sources")
    return sorted({canonical_source(validate.check_source(s, "sources")) or "" for s in sources})


def expired(recheck_by: str | None, as_of: str) -> bool:
    """Whether a memory is past its recheck date (it stays; evidence mode skips it)."""
    return recheck_by is not None and recheck_by <= as_of


def gate_report(dropped: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """``{gate: [memory ids]}`` in gate order, for the memories each gate dropped."""
    report: dict[str, list[str]] = {gate: [] for gate in GATES}
    for memory_id, gate in dropped:
        report[gate].append(memory_id)
    return {gate: ids for gate, ids in report.items() if ids}
