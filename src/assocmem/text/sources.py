"""Canonical sources: one name per origin, so counting sources is not inflated by spelling."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from assocmem.text.concepts import normalize_text

# Two-label public suffixes common enough to matter; a full public-suffix list is
# not worth a dependency here, and an unknown suffix only leaves two variants apart.
_TWO_LABEL_SUFFIXES = frozenset(
    {"co.uk", "org.uk", "ac.uk", "gov.uk", "com.au", "net.au", "org.au", "co.jp", "ne.jp",
     "or.jp", "co.nz", "com.br", "com.cn", "co.in", "co.kr", "com.mx", "co.za"}
)  # fmt: skip
_DOMAIN = re.compile(r"^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}$")
_SKIP_LABELS = ("www", "m", "en", "mobile")


def canonical_source(source: str | None) -> str | None:
    """One name per origin: ``https://en.wikipedia.org/wiki/X``, ``wikipedia.org`` and
    ``Wikipedia`` all give ``wikipedia``; other names are normalized text."""
    if source is None:
        return None
    text = source.strip()
    host = urlsplit(text).hostname if "://" in text else None
    candidate = (host or text).lower().rstrip(".")
    if _DOMAIN.match(candidate):
        return _site(candidate)
    return normalize_text(text)


def _site(host: str) -> str:
    labels = [label for label in host.split(".") if label]
    while len(labels) > 2 and labels[0] in _SKIP_LABELS:
        labels = labels[1:]
    suffix = 2 if ".".join(labels[-2:]) in _TWO_LABEL_SUFFIXES else 1
    return labels[-suffix - 1] if len(labels) > suffix else labels[0]
