"""What any argument's values may hold, checked before anything else reads them.

Invariant: a value that passes holds only strings that encode as UTF-8 (no lone
surrogates) without NUL characters, integers within 64 bits, and containers nested
at most `MAX_NESTING` deep, so no encoder, driver or recursive walk downstream can
fail on it; a value that fails raises `InvalidInput` naming its field. Both backends
refuse the same values, since PostgreSQL can store neither NUL nor a surrogate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assocmem.errors import InvalidInput

# Deep enough for any honest meta, policy or declaration; far below every recursion
# limit (Python's, the JSON encoders', pydantic's).
MAX_NESTING = 32
INT_MIN, INT_MAX = -(2**63), 2**63 - 1


def check_clean(value: Any, field: str) -> None:
    """Refuse ``value`` unless every string, integer and container in it is safe."""
    _walk(value, field, 0)


def _walk(value: Any, field: str, depth: int) -> None:
    if isinstance(value, str):
        _check_string(value, field)
    elif isinstance(value, bool | float) or value is None:
        return
    elif isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise InvalidInput(f"{field} holds an integer beyond 64 bits", field=field)
    elif isinstance(value, Mapping | list | tuple | set | frozenset):
        if depth >= MAX_NESTING:
            raise InvalidInput(f"{field} is nested deeper than {MAX_NESTING} levels", field=field)
        if isinstance(value, Mapping):
            for key, item in value.items():
                _walk(key, field, depth + 1)
                _walk(item, field, depth + 1)
        else:
            for item in value:
                _walk(item, field, depth + 1)
    # Anything else (a generator, a datetime, an object) is left to the field's own check.


def _check_string(value: str, field: str) -> None:
    if "\x00" in value:
        raise InvalidInput(f"{field} must not contain NUL characters", field=field)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(
                f"{field} holds a lone surrogate, which is not valid Unicode text", field=field
            ) from None
