"""The HTTP server (FastAPI + uvicorn, the ``server`` extra) and its API keys.

Invariant: importing this package, `keys` or `limits` (standard library only), needs no extra;
FastAPI is imported only when `create_app` is first used, and its absence is
`DependencyMissing`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assocmem.adapters.server.api import create_app


def __getattr__(name: str) -> Any:
    if name != "create_app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        from assocmem.adapters.server.api import create_app
    except ImportError as exc:
        from assocmem.errors import DependencyMissing

        raise DependencyMissing("the HTTP server needs `pip install assocmem[server]`") from exc
    return create_app


__all__ = ["create_app"]
