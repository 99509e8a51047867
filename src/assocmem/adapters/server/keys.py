"""API keys: each bound to one agent identity and its roles, stored only as hashes.

A service key may also act for other agents it was granted (``agents``: exact ids, or
prefixes written ``prefix*``): a backend serving many end users behind its own
authentication holds one key and names the end user per request, while the store
keeps each end user a scope of its own.

Invariants: a key's secret is shown once, when it is made, and never stored; the
key file holds a SHA-256 of each secret (secrets are 256 random bits, so a
plain hash is as strong as a slow one); a revoked key stops working at the
server's next request, because the server rereads the file when it changes.
Every change is a read-modify-write under an exclusive lock on a file beside it
(``<keys>.lock``), written to a temporary file, fsynced and renamed over the old,
so concurrent `keys add` processes lose no key and a reader never sees half a file.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import secrets
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from assocmem.errors import AuthenticationRequired, InvalidInput
from assocmem.text import times

PREFIX = "am_"
HASH_PREFIX = "sha256:"


@dataclass(frozen=True)
class KeyEntry:
    """One key as stored: who it speaks for, what roles it may read in, its hash."""

    id: str
    agent_id: str
    roles: tuple[str, ...]
    hash: str
    created_at: str
    revoked_at: str | None = None
    agents: tuple[str, ...] = ()  # a service key's grants: ids, or ``prefix*``

    def speaks_for(self, agent_id: str) -> bool:
        """Whether the key may act as ``agent_id``: its own, or one of its grants."""
        return agent_id == self.agent_id or any(
            agent_id.startswith(grant[:-1]) if grant.endswith("*") else agent_id == grant
            for grant in self.agents
        )

    def public(self) -> dict[str, Any]:
        """The entry without its hash (what `keys list` shows)."""
        data = asdict(self)
        data.pop("hash")
        return data


def _hash(secret: str) -> str:
    return HASH_PREFIX + hashlib.sha256(secret.encode()).hexdigest()


def read_keys(path: str | Path) -> list[KeyEntry]:
    """Every key in the file (an absent file holds none)."""
    file = Path(path)
    if not file.exists():
        return []
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
        return [
            KeyEntry(
                **{
                    **entry,
                    "roles": tuple(entry["roles"]),
                    "agents": tuple(entry.get("agents", ())),
                }
            )  # fmt: skip
            for entry in raw
        ]
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidInput(f"key file {str(path)!r} is not a valid key file: {exc}") from exc


@contextmanager
def _locked(path: str | Path) -> Iterator[None]:
    """Hold the key file's exclusive lock (on ``<file>.lock``, which is never replaced,
    unlike the key file itself)."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(f"{file}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


def _write_keys(path: str | Path, entries: list[KeyEntry]) -> None:
    """Replace the key file atomically and durably (call holding `_locked`)."""
    file = Path(path)
    handle, temporary = tempfile.mkstemp(dir=file.parent, prefix=".keys-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump([asdict(e) for e in entries], out, indent=2)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o600)
        os.replace(temporary, file)  # atomic: a reader sees the old file or the new one
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    folder = os.open(file.parent, os.O_RDONLY)
    try:
        os.fsync(folder)  # the rename itself survives a crash
    finally:
        os.close(folder)


def add_key(
    path: str | Path,
    agent_id: str,
    roles: tuple[str, ...] = (),
    agents: tuple[str, ...] = (),
) -> tuple[KeyEntry, str]:
    """Make a key for ``agent_id`` (and, for a service key, the ``agents`` it may act
    for: ids or ``prefix*``); returns its entry and the secret, shown only now."""
    if not agent_id or not agent_id.strip():
        raise InvalidInput("a key needs an agent id", field="agent_id")
    for grant in agents:
        # A bare "*" would be every agent of the store: a keyless server, not a grant.
        if not isinstance(grant, str) or not grant.strip() or grant.strip() == "*":
            raise InvalidInput(
                f"an agent grant must be an id or a non-empty prefix followed by *: {grant!r}",
                field="agents",
            )
        if "*" in grant[:-1]:
            raise InvalidInput(f"a grant may end with * only: {grant!r}", field="agents")
    key_id = secrets.token_hex(6)
    secret = f"{PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
    entry = KeyEntry(key_id, agent_id, tuple(roles), _hash(secret), times.now(),
                     agents=tuple(agents))  # fmt: skip
    with _locked(path):
        _write_keys(path, [*read_keys(path), entry])
    return entry, secret


def revoke_key(path: str | Path, key_id: str) -> bool:
    """Revoke a key by id; False when no active key has that id."""
    with _locked(path):
        entries = read_keys(path)
        found = False
        for i, entry in enumerate(entries):
            if entry.id == key_id and entry.revoked_at is None:
                entries[i] = KeyEntry(**{**asdict(entry), "revoked_at": times.now()})
                found = True
        if found:
            _write_keys(path, entries)
    return found


class KeyRing:
    """The keys a server accepts, reread whenever the file changes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._stamp: float | None = None
        self._by_id: dict[str, KeyEntry] = {}
        self.refresh()

    def refresh(self) -> None:
        stamp = self.path.stat().st_mtime if self.path.exists() else None
        if stamp != self._stamp:
            self._by_id = {e.id: e for e in read_keys(self.path) if e.revoked_at is None}
            self._stamp = stamp

    def __len__(self) -> int:
        return len(self._by_id)

    def identify(self, secret: str | None) -> KeyEntry:
        """The key entry a presented secret belongs to, or `AccessDenied`."""
        self.refresh()
        if not secret or not secret.startswith(PREFIX):
            raise AuthenticationRequired(
                "a valid API key is required (Authorization: Bearer am_...)"
            )
        key_id = secret[len(PREFIX) :].split("_", 1)[0]
        entry = self._by_id.get(key_id)
        if entry is None or not hmac.compare_digest(entry.hash, _hash(secret)):
            raise AuthenticationRequired("the API key is unknown or revoked")
        return entry
