"""Progress bars for long work (embedding backfill, bulk import, benchmarks): one place decides.

Invariant: a bar writes only to stderr, and only when stderr is a terminal or
``ASSOCMEM_PROGRESS=1`` asks for it (``ASSOCMEM_PROGRESS=0`` silences it), so JSON on
stdout, piped output and a test's captured streams stay clean. Bars are tqdm's.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import Never, TypeVar

from tqdm import tqdm

T = TypeVar("T")

ENVIRONMENT = "ASSOCMEM_PROGRESS"
_ON = frozenset({"1", "true", "yes", "on"})
_OFF = frozenset({"0", "false", "no", "off"})


def enabled() -> bool:
    """Whether bars are drawn: the environment's choice, else whether stderr is a terminal."""
    setting = os.environ.get(ENVIRONMENT, "").strip().lower()
    if setting in _ON:
        return True
    if setting in _OFF:
        return False
    return sys.stderr.isatty()


def bar(total: int | None = None, *, desc: str = "", unit: str = "it") -> tqdm[Never]:
    """A bar to advance with ``.update(n)`` and close (or use as a context manager)."""
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        disable=not enabled(),
        dynamic_ncols=True,
        mininterval=0.5,
    )


def track(
    items: Iterable[T], *, total: int | None = None, desc: str = "", unit: str = "it"
) -> Iterator[T]:
    """``items`` passed through, advancing a bar per item."""
    with bar(total, desc=desc, unit=unit) as progress:
        for item in items:
            yield item
            progress.update(1)
