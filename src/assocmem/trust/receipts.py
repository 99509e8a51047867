"""Write receipts: a hash chain committing each write's text and canonical sources,
optionally signed with Ed25519, and its verification.

Invariants: a receipt is appended in the same transaction as the write it commits
(so a rolled-back write leaves no receipt, and a committed one always has one),
and its position and previous hash come from the chain head read inside that
transaction, which no other writer interleaves with: concurrent writers form one
chain. Each hash covers position, memory id, the text's sha256, the sources, the
previous hash and the signer's public key.

What an unsigned chain does not prove: anyone who can rewrite the store can
recompute every hash, so without a signature (key kept out of the store's reach)
or an externally anchored head it only catches an edit by someone who changed a
record but not the chain. It never proves a source was *right* at write time —
a wrong label is committed faithfully.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from assocmem.errors import DependencyMissing, InvalidInput
from assocmem.schema import NewMemory
from assocmem.text import times
from assocmem.trust import attributed
from assocmem.trust.attribution_rows import ReceiptRow
from assocmem.trust.store import TrustRow
from assocmem.trust.store_attribution import AttributionQueries
from assocmem.trust.types import AttributionMismatch, AttributionReport
from assocmem.types import Scope, WriteResult

GENESIS = "0" * 64
PAGE = 1000


class Verifying(Protocol):
    """What verifying the chain reads in one snapshot: the receipts, the memories a
    scope reads, and their taint (their standing rows)."""

    def snapshot(self) -> AbstractContextManager[None]: ...

    def receipts_page(self, after: int, limit: int) -> list[ReceiptRow]: ...

    def attributed_rows(
        self, scope: Scope
    ) -> list[tuple[int, str, str, str | None, str | None]]: ...

    def trust_rows(self, seqs: Sequence[int]) -> dict[int, TrustRow]: ...


def _ed25519() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError as exc:
        raise DependencyMissing(
            "signed receipts need cryptography: install `assocmem[attest]`"
        ) from exc
    return ed25519


def settings(receipts: Any, key: Any) -> tuple[bool, Any]:
    """Whether writes append receipts, and the loaded signing key (None: unsigned).
    Off unless asked for; giving a key turns them on."""
    if not isinstance(receipts, bool):
        raise InvalidInput("receipts must be true or false", field="receipts")
    loaded = load_key(key) if key is not None else None
    return receipts or loaded is not None, loaded


def load_key(key: Any) -> Any:
    """An Ed25519 private key from a key object, 32 raw bytes or their hex."""
    ed25519 = _ed25519()
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return key
    raw = key
    if isinstance(key, str):
        try:
            raw = bytes.fromhex(key)
        except ValueError:
            raw = b""
    if not isinstance(raw, bytes) or len(raw) != 32:
        raise InvalidInput(
            "receipt_key must be an Ed25519 private key, 32 bytes or their hex",
            field="receipt_key",
        )
    return ed25519.Ed25519PrivateKey.from_private_bytes(raw)


def public_hex(key: Any) -> str:
    """The hex of a private key's raw public key."""
    from cryptography.hazmat.primitives import serialization

    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return str(raw.hex())


def link_hash(
    position: int,
    memory_id: str,
    text_sha256: str,
    sources: Sequence[str],
    prev_hash: str,
    public_key: str | None,
) -> str:
    """The hash of one link: sha256 of its fields as canonical JSON."""
    body = json.dumps(
        [position, memory_id, text_sha256, list(sources), prev_hash, public_key],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def append(
    store: AttributionQueries,
    memories: Sequence[NewMemory],
    results: Sequence[WriteResult],
    taints: Sequence[Iterable[str]],
    key: Any | None,
) -> None:
    """Append a receipt for each stored memory, committing its source and the taint
    the write stored for it (``taints[i]``; call inside the write transaction)."""
    public = public_hex(key) if key is not None else None
    head = store.receipt_head()
    position, prev = head if head is not None else (0, GENESIS)
    now = times.now()
    for memory, result, taint in zip(memories, results, taints, strict=True):
        if not result.stored or result.id is None:
            continue
        position += 1
        text_sha = hashlib.sha256(memory.text.encode("utf-8")).hexdigest()
        committed = attributed.sources([memory.source_canonical], taint)
        digest = link_hash(position, result.id, text_sha, committed, prev, public)
        signature = key.sign(bytes.fromhex(digest)).hex() if key is not None else None
        store.append_receipt(
            ReceiptRow(position, result.id, text_sha, committed, prev, digest, public,
                       signature, now)
        )  # fmt: skip
        prev = digest


def _signature_fails(row: ReceiptRow, expected: str | None) -> str | None:
    """Why a receipt's signature fails (None: it holds, or none is required)."""
    if expected is not None and row.public_key != expected:
        return "not signed by the expected key"
    if row.signature is None or row.public_key is None:
        return None if expected is None else "unsigned"
    ed25519 = _ed25519()
    from cryptography.exceptions import InvalidSignature

    try:
        public = ed25519.Ed25519PublicKey.from_public_bytes(bytes.fromhex(row.public_key))
        public.verify(bytes.fromhex(row.signature), bytes.fromhex(row.hash))
    except (ValueError, InvalidSignature):
        return "bad signature"
    return None


def verify(store: Verifying, scope: Scope, expected_key: str | None) -> AttributionReport:
    """Walk the chain, then compare each active memory's current sources (own and
    taint) to its latest receipt. ``expected_key`` (hex) makes every receipt need a
    valid signature by it."""
    committed: dict[str, tuple[str, ...]] = {}
    count, prev, broken_at, reason = 0, GENESIS, None, None
    after = 0
    with store.snapshot():
        while page := store.receipts_page(after, PAGE):
            for row in page:
                count += 1
                if broken_at is None:
                    expected_hash = link_hash(
                        row.position, row.memory_id, row.text_sha256, row.sources,
                        row.prev_hash, row.public_key,
                    )  # fmt: skip
                    if row.position != count:
                        reason = "a receipt is missing before this one"
                    elif row.prev_hash != prev:
                        reason = "its previous hash is not the prior receipt's"
                    elif row.hash != expected_hash:
                        reason = "its hash does not match its contents"
                    else:
                        reason = _signature_fails(row, expected_key)
                    if reason is not None:
                        broken_at = row.position
                prev = row.hash
                committed[row.memory_id] = row.sources
            after = page[-1].position
        rows = store.attributed_rows(scope)
        taint_of = {seq: row.taint for seq, row in store.trust_rows([r[0] for r in rows]).items()}
    mismatches, unreceipted = [], 0
    for seq, memory_id, _, source, canonical in rows:
        if memory_id not in committed:
            unreceipted += 1
            continue
        current = attributed.sources(
            attributed.own_sources(source, canonical), taint_of.get(seq, ())
        )
        if current != committed[memory_id]:
            mismatches.append(AttributionMismatch(memory_id, committed[memory_id], current))
    return AttributionReport(
        chain_intact=broken_at is None,
        # Receipts of what this scope reads, never the store-wide count: the chain is
        # shared, and its length would count other tenants' writes.
        receipts=len(rows) - unreceipted,
        broken_at=broken_at,
        broken_reason=reason if broken_at is not None else None,
        mismatches=tuple(mismatches),
        unreceipted=unreceipted,
        signed_by=expected_key,
    )
