"""What an import reports: what it kept and the lines it refused."""

from __future__ import annotations

from dataclasses import dataclass

from assocmem.types import Plain


@dataclass(frozen=True)
class LineProblem(Plain):
    """An import line that was not taken: its number (the first line is 1), the field
    at fault (None: the line as a whole), the error type and why."""

    line: int
    field: str | None
    error: str
    message: str


@dataclass(frozen=True)
class ImportReport(Plain):
    """What an import took: counts by line kind (``record``, ``link``, ``lesson``,
    ``taught``, ``feedback``, ``entity``, ``relation``) of lines imported and of lines
    skipped because the store already held them, and every line refused."""

    imported: dict[str, int]
    skipped: dict[str, int]
    errors: tuple[LineProblem, ...] = ()
