"""Corroboration: the distinct origins that independently state a memory's claim.

Invariant: a memory's corroborating origins are the distinct canonical origins
(`text.sources.distinct_origins`) of the own sources of it and of every active,
unslashed memory the reader sees restating it — the same text up to case, width
and spacing (the write fingerprint; a key's value restated is the same text).
Taint never counts (a summary is not a second witness to its parents), and no
writer-chosen field does: ``kind``, ``confidence``, ``value``, ``tags`` and
``meta`` are never read here. Under strict corroboration an origin is a verified
Ed25519 key, so two source strings under one key are one witness.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Protocol

from assocmem.store import View
from assocmem.text.sources import distinct_origins
from assocmem.trust.store import TrustRow

MIN_ORIGINS = 2


class Corroborating(Protocol):
    """What counting corroboration reads: the memories restating a text, and their
    standing rows."""

    def restating(self, view: View, fingerprints: Sequence[str]) -> dict[str, list[int]]: ...

    def trust_rows(self, seqs: Sequence[int]) -> dict[int, TrustRow]: ...


def witnesses(rows: Iterable[TrustRow], strict: bool) -> tuple[str, ...]:
    """The distinct origins (or, strict, verified keys) these restating rows carry."""
    live = [r for r in rows if not r.slashed]
    if strict:
        return tuple(sorted({r.attested_key for r in live if r.attested_key}))
    return tuple(sorted(distinct_origins(r.source for r in live)))


def origins(
    store: Corroborating, view: View, rows: Sequence[TrustRow], strict: bool
) -> dict[int, tuple[str, ...]]:
    """The corroborating origins of each row's memory, among what ``view`` sees."""
    return among(store, rows, restating(store, view, rows), strict)


def restating(store: Corroborating, view: View, rows: Sequence[TrustRow]) -> dict[str, list[int]]:
    """The active memories ``view`` sees stating each row's text, by fingerprint."""
    return store.restating(replace(view, statuses=("active",)), [r.fingerprint for r in rows])


def among(
    store: Corroborating, rows: Sequence[TrustRow], restating: dict[str, list[int]], strict: bool
) -> dict[int, tuple[str, ...]]:
    """`origins`, given the restating memories already read (`restating`)."""
    others = sorted({s for seqs in restating.values() for s in seqs} - {r.seq for r in rows})
    known = {**store.trust_rows(others), **{r.seq: r for r in rows}}
    return {
        r.seq: witnesses(
            [r, *(known[s] for s in restating.get(r.fingerprint, []) if s in known and s != r.seq)],
            strict,
        )
        for r in rows
    }
