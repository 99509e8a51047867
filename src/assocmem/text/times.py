"""Absolute UTC timestamps: the one textual form every stored time takes.

Invariant: stored times are ``YYYY-MM-DDTHH:MM:SS.ffffffZ``, so string order is
time order in SQL on every backend. Naive datetimes and relative phrases are
rejected: a time that depends on when it is read rots once stored.

One exception: learned links keep their time as integer microseconds since the
epoch (`to_micros`, `from_micros`), because `links` and its pending list are the
store's most rewritten rows and the text form was half their width.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from assocmem.errors import InvalidTime

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def now() -> str:
    """The current time in the stored form."""
    return format_time(datetime.now(UTC))


def format_time(moment: datetime) -> str:
    """An aware datetime in the stored form."""
    return moment.astimezone(UTC).strftime(_FORMAT)


def parse_time(value: str | datetime, *, field: str) -> str:
    """Validate an absolute time given as an aware datetime or ISO 8601 string.

    Raises `InvalidTime` naming ``field`` for naive or unparseable values.
    """
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip().replace("z", "Z"))
        except ValueError as exc:
            raise InvalidTime(
                f"{field} must be an absolute ISO 8601 time with a timezone, got {value!r}",
                field=field,
            ) from exc
    else:
        raise InvalidTime(f"{field} must be a datetime or ISO 8601 string", field=field)
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise InvalidTime(
            f"{field} must carry a timezone (e.g. 2024-05-01T12:00:00Z), got {value!r}",
            field=field,
        )
    return format_time(moment)


def to_datetime(stored: str) -> datetime:
    """A stored time back as an aware datetime."""
    return datetime.fromisoformat(stored)  # the stored form ends in Z: aware, UTC


def to_micros(stored: str) -> int:
    """A stored time as integer microseconds since the Unix epoch (exact)."""
    return (to_datetime(stored) - _EPOCH) // _MICROSECOND


def from_micros(micros: int) -> str:
    """Integer microseconds since the Unix epoch in the stored form (exact)."""
    return format_time(_EPOCH + timedelta(microseconds=micros))
