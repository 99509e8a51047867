"""Optional dependencies: imported when a feature needs them, with directions when missing."""

from __future__ import annotations

from typing import Any

from assocmem.errors import DependencyMissing


def require_numpy() -> Any:
    """numpy, or a `DependencyMissing` that says which extra installs it."""
    try:
        import numpy
    except ImportError as exc:
        raise DependencyMissing("vector search needs numpy: install `assocmem[embed]`") from exc
    return numpy


def require_ed25519() -> Any:
    """cryptography's Ed25519 module (attestations), or a `DependencyMissing`."""
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError as exc:
        raise DependencyMissing(
            "attestations need cryptography: install `assocmem[attest]`"
        ) from exc
    return ed25519


def require_frontmatter() -> Any:
    """python-frontmatter (a vault note's YAML header), or a `DependencyMissing`."""
    try:
        import frontmatter
    except ImportError as exc:
        raise DependencyMissing(
            "a vault needs python-frontmatter: install `assocmem[vault]`"
        ) from exc
    return frontmatter


def require_httpx() -> Any:
    """httpx (`Client` and `AsyncClient`'s HTTP), or a `DependencyMissing`."""
    try:
        import httpx
    except ImportError as exc:
        raise DependencyMissing("the HTTP client needs httpx: install `assocmem[client]`") from exc
    return httpx
