"""Absolute UTC timestamps: the one textual form every stored time takes.

Invariant: stored times are ``YYYY-MM-DDTHH:MM:SS.ffffffZ``, always 27 characters
with a four-digit, zero-padded year, so string order is time order in SQL on every
backend. Naive datetimes and relative phrases are rejected: a time that depends on
when it is read rots once stored.

The range is every instant a `datetime` holds in UTC, 0001-01-01T00:00:00Z to
9999-12-31T23:59:59.999999Z; a time given with an offset that carries it past
either end (``9999-12-31T23:59:59-05:00``) is refused as `InvalidTime`, since no
stored form can hold it. The range is kept whole rather than narrowed because the
arithmetic done on stored times cannot overflow inside it: a read's decay (as of
any time in the range), a consolidation's retention and a read's clock resets
subtract two stored times, and a difference of two datetimes always fits a
`timedelta`; microseconds since the epoch (`to_micros`, `from_micros`) fit 64 bits
across it. The one sum, a stored time plus a caller's number of days (`add_days`,
a retention rule's recheck date), is held at the range's end instead of raising,
since a date past the year 9999 means "never" to every reader of it; a narrower
range would not have spared it that guard, as the days are unbounded. (The lag a
profile adds to a date a question names stays clear of the ends: such dates are
read only in the years 1900 to 2099.)

One exception: learned links keep their time as integer microseconds since the
epoch (`to_micros`, `from_micros`), because `links` and its pending list are the
store's most rewritten rows and the text form was half their width.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from assocmem.errors import InvalidTime

EARLIEST = datetime.min.replace(tzinfo=UTC)
LATEST = datetime.max.replace(tzinfo=UTC)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
# The stored form of a year below 1000 as versions before padding wrote it ("999-01-…"):
# an export made by one of them still imports, as the padded year.
_UNPADDED = re.compile(r"(\d{1,3})(-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)", re.ASCII)


def now() -> str:
    """The current time in the stored form."""
    # Already in UTC: `format_time` without its conversion (a batch asks once per memory).
    return datetime.now(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def format_time(moment: datetime) -> str:
    """An aware datetime in the stored form (`OverflowError` where UTC cannot hold it)."""
    # isoformat pads the year to four digits; strftime's %Y does not on every platform.
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def parse_time(value: str | datetime, *, field: str) -> str:
    """Validate an absolute time given as an aware datetime or ISO 8601 string.

    Raises `InvalidTime` naming ``field`` for naive or unparseable values, and for
    times outside the range UTC can hold (see the module docstring).
    """
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        text = value.strip().replace("z", "Z")
        unpadded = _UNPADDED.fullmatch(text)
        if unpadded:
            text = unpadded[1].zfill(4) + unpadded[2]
        try:
            moment = datetime.fromisoformat(text)
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
    try:
        return format_time(moment)
    except OverflowError as exc:
        raise InvalidTime(
            f"{field} must lie between {format_time(EARLIEST)} and {format_time(LATEST)}"
            f" in UTC, got {value!r}",
            field=field,
        ) from exc


def to_datetime(stored: str) -> datetime:
    """A stored time back as an aware datetime."""
    return datetime.fromisoformat(stored)  # the stored form ends in Z: aware, UTC


def add_days(stored: str, days: float) -> str:
    """The stored time ``days`` later (earlier if negative), held at the range's end
    rather than passing it; ``days`` is any number but NaN (which callers refuse)."""
    try:
        return format_time(to_datetime(stored) + timedelta(days=days))
    except OverflowError:  # the sum, or days too many for a timedelta at all
        return format_time(LATEST if days > 0 else EARLIEST)


def to_micros(stored: str) -> int:
    """A stored time as integer microseconds since the Unix epoch (exact)."""
    return (to_datetime(stored) - _EPOCH) // _MICROSECOND


def from_micros(micros: int) -> str:
    """Integer microseconds since the Unix epoch in the stored form (exact)."""
    return format_time(_EPOCH + timedelta(microseconds=micros))
