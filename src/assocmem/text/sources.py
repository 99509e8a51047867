"""Canonical sources: one name per origin, resolved by the Public Suffix List.

Invariant: a URL or a host resolves to its registrable domain (``docs.example.com``
and ``example.com`` are one source, ``forum.example.net`` another, ``alice.github.io``
and ``bob.github.io`` two), by the list `publicsuffixlist` ships (no network); any
other name is its normalised text. `SOURCE_CANON` names this rule: a store records
the rule its ``source_canonical`` column was made with and is re-canonicalised when
it changes. A bare name and a domain are one origin only in `origins`, where a name
meets the one domain of the comparison whose registrable label it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from urllib.parse import urlsplit

from publicsuffixlist import PublicSuffixList

from assocmem.text.concepts import normalize_text

SOURCE_CANON = "psl-1"
_DOMAIN = re.compile(r"^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9-]{2,}$")


@cache
def _psl() -> PublicSuffixList:
    return PublicSuffixList()  # parses the shipped list once per process


def canonical_source(source: str | None) -> str | None:
    """The registrable domain of a URL or host (``https://en.wikipedia.org/wiki/X``
    and ``wikipedia.org`` give ``wikipedia.org``); the normalised text of any other
    name (``Wikipedia`` gives ``wikipedia``; `origins` makes those two one)."""
    if source is None:
        return None
    text = source.strip()
    host = urlsplit(text).hostname if "://" in text else None
    candidate = (host or text).lower().rstrip(".")
    if _DOMAIN.match(candidate):
        # A bare public suffix (``github.io``) has no registrable part: it is its own name.
        return _psl().privatesuffix(candidate) or candidate
    return normalize_text(host or text)


def registrable_label(canonical: str) -> str | None:
    """The label a registrable domain registers (``wikipedia`` of ``wikipedia.org``,
    ``bbc`` of ``bbc.co.uk``); None for a name that is not a domain."""
    if "." not in canonical or " " in canonical:
        return None
    suffix = _psl().publicsuffix(canonical)
    if not suffix or suffix == canonical:
        return None
    return canonical[: -len(suffix) - 1].rsplit(".", 1)[-1]


def origins(sources: Iterable[str]) -> dict[str, str]:
    """Each canonical source of one comparison → its origin: a domain is its own
    origin; a bare name is the origin of the single domain in ``sources`` whose
    registrable label it equals (``wikipedia`` with ``wikipedia.org``), and its own
    when none or several do (``example`` beside ``example.com`` and ``example.net``
    stays apart, so no guess merges two sites)."""
    distinct = sorted(set(sources))
    by_label: dict[str, list[str]] = {}
    for source in distinct:
        label = registrable_label(source)
        if label is not None:
            by_label.setdefault(label, []).append(source)
    resolved = {}
    for source in distinct:
        domains = by_label.get(source, []) if registrable_label(source) is None else []
        resolved[source] = domains[0] if len(domains) == 1 else source
    return resolved


def distinct_origins(sources: Iterable[str | None]) -> set[str]:
    """The distinct origins among ``sources`` (None, no source, counts as none)."""
    return set(origins(s for s in sources if s is not None).values())
