"""Attestations: a source's Ed25519 signature over the claim it authored.

Invariant: the signed bytes are `signed_bytes` (a version tag, the canonical
source, the claim text, each NUL-separated), the one definition `attest` signs and
`verify` checks; a write carrying an attestation that does not verify over its
own text and source (forged, or replayed from another claim) is refused with an
`InvalidInput` naming ``attestation``, never stored unattested. A signature proves
who authored a claim, not that it is true.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assocmem.errors import InvalidInput
from assocmem.optional import require_ed25519
from assocmem.text.sources import canonical_source

if TYPE_CHECKING:  # cryptography is the `attest` extra, imported when a signature is met
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

TAG = b"assocmem-attest-1"


def signed_bytes(text: str, source: str | None) -> bytes:
    """The bytes an attestation signs: the claim bound to its canonical source."""
    return b"\0".join([TAG, (canonical_source(source) or "").encode(), text.encode()])


def attest(text: str, private_key: Ed25519PrivateKey | bytes | str, source: str | None) -> str:
    """The hex Ed25519 signature of ``text`` from ``source`` under ``private_key`` (a
    key object, its 32 raw bytes or their hex); pass it to ``write(...,
    attestation=(public_key_hex, signature))``."""
    key = _private(private_key) if isinstance(private_key, bytes | str) else private_key
    return str(key.sign(signed_bytes(text, source)).hex())


def public_key_hex(private_key: Ed25519PrivateKey) -> str:
    """The raw public key of ``private_key``, in hex (what an attestation names)."""
    return private_key.public_key().public_bytes_raw().hex()


def verify(text: str, source: str | None, attestation: Any) -> tuple[str, str]:
    """``(public key hex, signature hex)`` of an attestation verified over this claim."""
    if (
        not isinstance(attestation, list | tuple)
        or len(attestation) != 2
        or not all(isinstance(part, str) for part in attestation)
    ):
        raise InvalidInput(
            "attestation must be (public_key_hex, signature_hex)", field="attestation"
        )
    key_hex, signature_hex = (part.strip().lower() for part in attestation)
    ed25519 = require_ed25519()
    from cryptography.exceptions import InvalidSignature  # present once ed25519 imported

    try:
        key = ed25519.Ed25519PublicKey.from_public_bytes(bytes.fromhex(key_hex))
        key.verify(bytes.fromhex(signature_hex), signed_bytes(text, source))
    except (ValueError, InvalidSignature) as exc:
        raise InvalidInput(
            "attestation does not verify over this claim and its source (forged, or "
            "signed for another claim)",
            field="attestation",
        ) from exc
    return key_hex, signature_hex


def _private(raw: bytes | str) -> Ed25519PrivateKey:
    try:
        data = bytes.fromhex(raw) if isinstance(raw, str) else raw
        key: Ed25519PrivateKey = require_ed25519().Ed25519PrivateKey.from_private_bytes(data)
        return key
    except ValueError as exc:
        raise InvalidInput("private_key must be 32 Ed25519 bytes", field="private_key") from exc
